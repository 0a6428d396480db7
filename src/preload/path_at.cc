// Resolution of (dirfd, path) to an absolute path for the forwarding decision:
// AT_FDCWD, forwarded directory descriptors, and real ones via /proc/self/fd.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/cwd.h"
#include "preload/path_resolve.h"
#include "preload/state.h"

namespace iorelay::preload {
namespace {

// The directory a relative path starts from, into base; false if unknown. *forwarded: the base
// is a forwarded directory (the working directory or a descriptor's).
bool BaseDir(int dirfd, char* base, size_t size, bool* forwarded) {
  *forwarded = false;
  if (dirfd == AT_FDCWD) {
    if (ForwardedCwd(base, size)) return *forwarded = true;
    return syscall(SYS_getcwd, base, size) > 0 && base[0] == '/';
  }
  if (IsForwardedFd(dirfd)) {
    FdTable::Ref e = g_table.Acquire(dirfd);
    if (!e || e->path.size() + 1 > size) return false;
    e->path.copy(base, e->path.size());
    base[e->path.size()] = '\0';
    return *forwarded = true;
  }
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
  long n = syscall(SYS_readlinkat, AT_FDCWD, link, base, size - 1);
  if (n <= 0) return false;
  base[n] = '\0';
  return base[0] == '/';  // "socket:[..]", "anon_inode:..." are not directories
}

// Whether `path` names a directory by its form: a trailing slash, or a last component "." or
// "..", which Linux resolves only to a directory.
bool NamesADirectory(const char* path) {
  size_t n = strlen(path);
  if (path[n - 1] == '/') return true;
  size_t last = n;
  while (last > 0 && path[last - 1] != '/') --last;
  const char* name = path + last;
  return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

}  // namespace

namespace {

// ResolvedPath, and whether a relative path was taken against a forwarded base.
int Resolve(int dirfd, const char* path, AbsPath* out, bool* forwarded_base,
            DotDot dotdot = DotDot::kRemove) {
  *forwarded_base = false;
  if (path == nullptr || path[0] == '\0') return 0;
  int saved = errno;
  int n = 0;
  char base[PATH_MAX + 1];
  if (path[0] == '/' || BaseDir(dirfd, base, sizeof base, forwarded_base)) {
    n = NormalizePath(path[0] == '/' ? nullptr : base, path, out->buf, sizeof out->buf, dotdot);
  }
  errno = saved;
  return n > 0 ? n : 0;
}

// Whether a forwarded path's ".." may go to the daemon as it is: the path has one (or is taken
// against a directory descriptor's path, which may), and the daemon needs it to resolve what
// the kernel would (a symbolic link to a directory before it, a missing name).
bool MayKeepDotDots(int dirfd, const char* path) {
  return strstr(path, "..") != nullptr || (path[0] != '/' && dirfd != AT_FDCWD);
}

}  // namespace

int ForwardedPrefixDepth(const char* path) {
  if (iorelay_is_forwarded(g_client, "/") == 1) return 0;
  char leading[PATH_MAX];
  int depth = 0;
  for (size_t i = 1;; ++i) {
    if (path[i] != '/' && path[i] != '\0') continue;
    if (i >= sizeof leading) return depth;
    ++depth;
    memcpy(leading, path, i);
    leading[i] = '\0';
    if (iorelay_is_forwarded(g_client, leading) == 1 || path[i] == '\0') return depth;
  }
}

namespace {

// The daemon as CanonicalPath's oracle: symbolic links read through the relay.
class DaemonPaths final : public PathOracle {
 public:
  long ReadLink(const char* abs, char* buf, size_t size) override {
    return static_cast<long>(iorelay_readlink(g_client, abs, buf, size));
  }
  bool InTree(const char* abs) override { return iorelay_is_forwarded(g_client, abs) == 1; }
};

}  // namespace

int CanonicalForwarded(const char* abs, char* out, size_t size) {
  DaemonPaths daemon;
  return CanonicalPath(abs, ForwardedPrefixDepth(abs), daemon, out, size);
}

namespace {

// LeadsOutOfTheTree's walk (errno left as the daemon's calls leave it).
bool WalkLeavesTheTree(const char* abs, bool follow_last, AbsPath* out) {
  char path[sizeof out->buf];
  const size_t len = strlen(abs);
  if (len >= sizeof path) return false;
  memcpy(path, abs, len + 1);
  const char* last = nullptr;  // not followed: the parent is resolved, the name appended
  if (!follow_last && len > 0 && abs[len - 1] != '/') {  // (a trailing slash follows, as the
                                                         // kernel's walk does)
    char* slash = strrchr(path, '/');
    if (slash == nullptr || slash == path) return false;
    *slash = '\0';
    last = slash + 1;
  }
  char found[sizeof out->buf];  // (into `out` only when the walk leaves the tree)
  if (CanonicalForwarded(path, found, sizeof found) != kLeftTheTree) return false;
  const size_t have = strlen(found);
  if (last != nullptr) {
    if (have + 1 + strlen(last) + 1 > sizeof found) return false;
    found[have] = '/';
    strcpy(found + have + 1, last);
  }
  strcpy(out->buf, found);
  return true;
}

}  // namespace

bool LeadsOutOfTheTree(int refused, const char* abs, bool follow_last, AbsPath* out) {
  if (refused != EACCES) return false;
  const int saved = errno;  // the caller's error stands when the walk finds no way out
  const bool out_of_tree = WalkLeavesTheTree(abs, follow_last, out);
  errno = saved;
  return out_of_tree;
}

int ResolvedPath(int dirfd, const char* path, AbsPath* out) {
  bool forwarded_base;
  return Resolve(dirfd, path, out, &forwarded_base);
}

bool ForwardedPath(int dirfd, const char* path, AbsPath* out) {
  out->rebased = false;
  if (g_client == nullptr) return false;
  bool forwarded_base;
  int n = Resolve(dirfd, path, out, &forwarded_base);
  bool forwarded = n > 0 && iorelay_is_forwarded(g_client, out->buf) == 1;
  out->rebased = !forwarded && n > 0 && forwarded_base;
  // Decided on the lexical form; sent with its ".." kept where they stay beneath the prefix
  // (a path whose ".." would climb above it goes in its lexical form).
  if (forwarded && MayKeepDotDots(dirfd, path)) {
    const int depth = ForwardedPrefixDepth(out->buf);
    const int kept = Resolve(dirfd, path, out, &forwarded_base, DotDot::kKeep);
    n = kept > 0 && DotDotsStayBelow(out->buf, depth) ? kept
                                                      : Resolve(dirfd, path, out, &forwarded_base);
    forwarded = n > 0;
  }
  // The normalised form loses the slash that makes "file/" ENOTDIR (and unlink of it keep the
  // file): it goes to the daemon, which requires a directory there as the kernel does.
  if (forwarded && n > 1 && static_cast<size_t>(n) + 1 < sizeof out->buf && NamesADirectory(path)) {
    out->buf[n] = '/';
    out->buf[n + 1] = '\0';
  }
  return forwarded;
}

}  // namespace iorelay::preload
