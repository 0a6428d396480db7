// The interposer's process-wide state (client, descriptor table) and the helpers every
// wrapper shares: errno conversion and the "is this forwarded?" tests.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <climits>
#include <string>

#include "iorelay/iorelay.h"
#include "preload/fd_table.h"

#define IORELAY_EXPORT __attribute__((visibility("default")))

namespace iorelay::preload {

// Null when the interposer is inert (IORELAY_SERVERS unset or the client failed).
extern iorelay_client* g_client;
// Capacity 0 when inert, so IsForwardedFd is false for every descriptor.
extern FdTable g_table;

inline bool IsForwardedFd(int fd) { return g_table.Contains(fd); }

// errno = e; returns -1 (what every failing wrapper returns).
inline int Fail(int e) {
  errno = e;
  return -1;
}
// Whether a pointer that glibc declares non-null is null after all (an application may pass
// one; the kernel answers EFAULT): hidden from the compiler, which would fold the test away.
inline bool NullAnyway(const void* p) {
  asm("" : "+r"(p));
  return p == nullptr;
}

// A client result (count or -errno) as libc returns it.
template <class T>
inline T FromClient(T rc) {
  if (rc < 0) {
    errno = static_cast<int>(-rc);
    return -1;
  }
  return rc;
}

// An absolute, normalised path, room for a base directory plus a path.
struct AbsPath {
  char buf[2 * PATH_MAX + 2];
  // A relative path taken against a forwarded base (the forwarded working directory, a
  // forwarded directory's descriptor) that leads out of the forwarded tree: libc must get the
  // absolute form (LibcPath), since it would take the relative one against the gone directory,
  // whose `..` leads to the real directory that held it.
  bool rebased = false;
  const char* c_str() const { return buf; }
};

// The path to give libc when ForwardedPath said no: the absolute form for a rebased path (an
// *at() call then ignores its directory descriptor), else the caller's.
inline const char* LibcPath(const char* path, const AbsPath& abs) {
  return abs.rebased ? abs.c_str() : path;
}

// True if `path`, resolved against dirfd (AT_FDCWD, a forwarded directory
// descriptor, or a real directory via /proc/self/fd) and lexically normalised, lies
// under a forwarded prefix; then *out holds it. False leaves errno unchanged.
bool ForwardedPath(int dirfd, const char* path, AbsPath* out);
// How many leading components of `path` (forwarded, absolute, no "." or ".." among them) name
// the forwarded prefix it lies under: the fewest that are forwarded.
int ForwardedPrefixDepth(const char* path);
// The canonical form of the forwarded path `abs` (as ForwardedPath gives it): CanonicalPath
// (preload/path_resolve.h) with the daemon answering, below the prefix. Its length in `out`,
// kLeftTheTree (a link led out of the forwarded tree: `out` is for libc), or -errno.
int CanonicalForwarded(const char* abs, char* out, size_t size);
// Whether a forwarded call on `abs` that the daemon refused with `refused` met a symbolic link
// leading out of the forwarded tree, which the daemon never follows (it answers EACCES) and the
// kernel would follow in the caller's tree: then *out holds the path to give libc, resolved
// through the daemon's links (the last component left as it is unless `follow_last`). Costs a
// readlink round trip per component, on EACCES only.
bool LeadsOutOfTheTree(int refused, const char* abs, bool follow_last, AbsPath* out);
// A forwarded path call's result `rc` (0 or more, or -errno) as the caller gets it: when the
// daemon refused it because the path leads out of the tree through a symbolic link, the call
// made by `local` (libc's, on the path LeadsOutOfTheTree gives) in this process's own tree.
template <class T, class Local>
T OrOutOfTheTree(T rc, AbsPath* abs, bool follow_last, Local local) {
  if (rc < 0 && LeadsOutOfTheTree(static_cast<int>(-rc), abs->c_str(), follow_last, abs)) {
    return local(abs->c_str());
  }
  return FromClient(rc);
}
// The same resolution without the forwarding test: the length of the normalised absolute path
// in *out, or 0 when it cannot be resolved (a relative path against an unknown base).
int ResolvedPath(int dirfd, const char* path, AbsPath* out);

// Requests the AIO wrappers (POSIX and libaio) keep in flight at the daemon each hold a
// connection of the client's pool until their result is taken: at most half the pool
// (IORELAY_MAX_CONNECTIONS) at once, so that a process's own unreaped requests never leave a
// synchronous call waiting for a connection forever. Take a slot before iorelay_submit_*
// (false: carry the request out at once), return it when its result is taken
// (async_slots.cc).
bool TakeAsyncSlot();
void ReturnAsyncSlot();

// For a program on a forwarded path, copied into the memfd `copy` to be exec'd (its forwarded
// directory `origin`): a local directory holding links, under their DT_NEEDED names, to the
// staged copies of the forwarded shared objects it needs (and those need), for the new
// image's LD_LIBRARY_PATH; "" when it needs none (dl_forwarded.cc).
std::string StageProgramLibraries(int copy, const std::string& origin);

// Writes the whole of the forwarded file `f` to the local descriptor `fd` (at its offset):
// 0 or -errno (forwarded_copy.cc).
int CopyForwardedFile(iorelay_file* f, int fd);

// The mode a forwarded create asks the daemon for: `mode` less the process's file mode creation
// mask, which the interposer records at start and at every umask() (the daemon applies no mask
// of its own).
mode_t CreationMode(mode_t mode);
void RecordUmask(mode_t mask);

// Called by the constructor (state.cc) once the client exists: re-opens what an exec
// handed down (exec_env.cc).
void RestoreInheritedFds();

}  // namespace iorelay::preload
