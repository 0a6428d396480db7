// Namespace operations on forwarded paths: access (and euidaccess, eaccess), unlink, mkdir,
// mknod (and mkfifo), chmod, rmdir, rename, symlink, link, readlink, truncate, remove, realpath
// (and canonicalize_file_name). A rename or link across the forwarded boundary is EXDEV.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/libc_next.h"
#include "preload/path_resolve.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

// Calls that never take "." or ".." as their last component (remove, create, rename): when the
// caller's `path` ends so, true with *rc the kernel's answer, `dot` or `dotdot` once the
// directory is found (else the daemon's error for it). The lexical form ForwardedPath gives
// would name the directory itself (rmdir("d/.") would remove d).
bool RefusesDots(const char* path, const AbsPath& abs, int dot, int dotdot, int* rc) {
  size_t end = strlen(path);
  while (end > 1 && path[end - 1] == '/') --end;
  size_t start = end;
  while (start > 0 && path[start - 1] != '/') --start;
  const size_t len = end - start;
  const bool is_dot = len == 1 && path[start] == '.';
  const bool is_dotdot = len == 2 && path[start] == '.' && path[start + 1] == '.';
  if (!is_dot && !is_dotdot) return false;
  struct stat st;
  const int found = iorelay_stat(g_client, abs.c_str(), &st, 0);
  *rc = Fail(found < 0 ? -found : (is_dot ? dot : dotdot));
  return true;
}

// How TwoPaths treats a call's ends.
struct TwoPathRules {
  int refused = 0;            // an errno the flags call for, before anything is done
  bool follow_from = false;   // `from`'s last component is followed (link with AT_SYMLINK_FOLLOW)
  bool source_first = false;  // the kernel finds `from` before it compares file systems (link)
  int dot_from = 0, dot_to = 0;  // an end's errno when its last component is "." or ".."
};

// `otherwise`, or the daemon's error for the forwarded source `from` when the kernel would
// look it up first.
int SourceOr(const TwoPathRules& rules, const char* from, int otherwise) {
  if (!rules.source_first) return otherwise;
  struct stat st;
  const int found = iorelay_stat(g_client, from, &st, rules.follow_from ? 0 : 1);
  return found < 0 ? found : otherwise;
}

// A call on two paths (rename, link). Both ends forwarded: true, *rc from `both` (one call to
// the daemon of `from`). An end that a symbolic link leads out of the tree is a path in this
// process's tree: both ends there (led out, or not forwarded), true, *rc from libc through
// `local`; one end there and one in the forwarded tree: true, EXDEV, as between two file
// systems. Neither end forwarded: false, or true with libc's result through `local` when a
// relative end was taken against a forwarded base (LibcPath).
template <class Both, class Local>
bool TwoPaths(int olddir, const char* from, int newdir, const char* to, TwoPathRules rules, int* rc,
              Both both, Local local) {
  AbsPath a, b;
  bool fa = ForwardedPath(olddir, from, &a);
  bool fb = ForwardedPath(newdir, to, &b);
  if (!fa && !fb) {
    if (!a.rebased && !b.rebased) return false;
    *rc = local(LibcPath(from, a), LibcPath(to, b));
    return true;
  }
  if (rules.refused != 0) {
    *rc = Fail(rules.refused);
    return true;
  }
  if (fa && rules.dot_from != 0 && RefusesDots(from, a, rules.dot_from, rules.dot_from, rc)) {
    return true;
  }
  if (fb && rules.dot_to != 0 && RefusesDots(to, b, rules.dot_to, rules.dot_to, rc)) return true;
  if (!fa || !fb) {  // (walked only here, where the answer would otherwise be EXDEV)
    const bool out = fa ? LeadsOutOfTheTree(EACCES, a.c_str(), rules.follow_from, &a)
                        : LeadsOutOfTheTree(EACCES, b.c_str(), false, &b);
    if (out) {
      *rc = local(fa ? a.c_str() : LibcPath(from, a), fb ? b.c_str() : LibcPath(to, b));
    } else {
      *rc = FromClient(fa ? SourceOr(rules, a.c_str(), -EXDEV) : -EXDEV);
    }
    return true;
  }
  int got = both(a.c_str(), b.c_str());
  if (got == -EACCES) {
    const bool out_a = LeadsOutOfTheTree(EACCES, a.c_str(), rules.follow_from, &a);
    const bool out_b = LeadsOutOfTheTree(EACCES, b.c_str(), false, &b);
    if (out_a && out_b) {
      *rc = local(a.c_str(), b.c_str());  // (absolute: the directory descriptors do not count)
      return true;
    }
    if (out_a || out_b) got = out_a ? -EXDEV : SourceOr(rules, a.c_str(), -EXDEV);
  }
  *rc = FromClient(got);
  return true;
}

bool RenameAt(int olddir, const char* from, int newdir, const char* to, unsigned flags, int* rc) {
  return TwoPaths(
      olddir, from, newdir, to,
      {.dot_from = EBUSY, .dot_to = (flags & RENAME_NOREPLACE) ? EEXIST : EBUSY}, rc,
      [&](const char* a, const char* b) { return iorelay_rename(g_client, a, b, flags); },
      [&](const char* f, const char* t) { return REAL(renameat2)(olddir, f, newdir, t, flags); });
}

bool LinkAt(int olddir, const char* from, int newdir, const char* to, int flags, int* rc) {
  // AT_EMPTY_PATH: a forwarded descriptor has no kernel file to link.
  const int refused = (flags & ~AT_SYMLINK_FOLLOW) ? EINVAL : 0;
  return TwoPaths(
      olddir, from, newdir, to,
      {.refused = refused,
       .follow_from = (flags & AT_SYMLINK_FOLLOW) != 0,
       .source_first = true,
       .dot_to = EEXIST},
      rc,
      [&](const char* a, const char* b) {
        return iorelay_link(g_client, a, b, (flags & AT_SYMLINK_FOLLOW) ? 1 : 0);
      },
      [&](const char* f, const char* t) { return REAL(linkat)(olddir, f, newdir, t, flags); });
}

// mknod of a forwarded path: a regular file is an exclusive create; anything else (a FIFO, a
// device, a socket) is EPERM, as on a file system without them: the daemon serves regular files
// and directories only.
// `local` makes it in this process's tree when a link leads the path out of the tree.
template <class Local>
int MknodForwarded(AbsPath* abs, mode_t mode, Local local) {
  const mode_t type = mode & S_IFMT;
  if (type != 0 && type != S_IFREG) {  // (made where a link leads out of the tree)
    return LeadsOutOfTheTree(EACCES, abs->c_str(), false, abs) ? local(abs->c_str()) : Fail(EPERM);
  }
  iorelay_file* f = nullptr;
  int rc = iorelay_open(g_client, abs->c_str(), O_WRONLY | O_CREAT | O_EXCL,
                        CreationMode(mode & 07777), &f);
  if (rc < 0) return OrOutOfTheTree(rc, abs, false, local);
  return FromClient(iorelay_close(f));
}

// access, euidaccess and eaccess: for a forwarded path one answer, the daemon's (its
// credentials decide, so the real and effective IDs give the same).
template <class Real>
int AccessPath(const char* path, int mode, Real real) {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return real(LibcPath(path, abs), mode);
  return OrOutOfTheTree(iorelay_access(g_client, abs.c_str(), mode), &abs, true,
                        [&](const char* p) { return real(p, mode); });
}

template <class Real, class Length>
int TruncatePath(const char* path, Length len, Real real) {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return real(LibcPath(path, abs), len);
  return OrOutOfTheTree(iorelay_truncate(g_client, abs.c_str(), len), &abs, true,
                        [&](const char* p) { return real(p, len); });
}

// realpath of a forwarded path: walked below its prefix, each component's symbolic link
// replaced by its target (read from the daemon); a link leading out of the forwarded tree
// leaves the rest to libc.
char* RealpathForwarded(const AbsPath& abs, char* resolved) {
  const size_t n = strlen(abs.c_str());
  if (abs.c_str()[n - 1] == '/') {  // (asks for a directory: ENOTDIR otherwise)
    struct stat st;
    if (int rc = iorelay_stat(g_client, abs.c_str(), &st, 0); rc < 0) return (errno = -rc, nullptr);
  }
  char canonical[PATH_MAX];
  const int got = CanonicalForwarded(abs.c_str(), canonical, sizeof canonical);
  if (got == kLeftTheTree) return REAL(realpath)(canonical, resolved);
  if (got < 0) return (errno = -got, nullptr);
  if (resolved == nullptr) return strdup(canonical);
  memcpy(resolved, canonical, static_cast<size_t>(got) + 1);
  return resolved;
}

}  // namespace

extern "C" {

IORELAY_EXPORT char* realpath(const char* path, char* resolved) noexcept {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(realpath)(LibcPath(path, abs), resolved);
  return RealpathForwarded(abs, resolved);
}

IORELAY_EXPORT char* __realpath_chk(const char* path, char* resolved, size_t resolvedlen) {
  if (resolved != nullptr && resolvedlen < PATH_MAX) __chk_fail();
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs))
    return REAL(__realpath_chk)(LibcPath(path, abs), resolved, resolvedlen);
  return RealpathForwarded(abs, resolved);
}

IORELAY_EXPORT char* canonicalize_file_name(const char* path) noexcept {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs))
    return REAL(canonicalize_file_name)(LibcPath(path, abs));
  return RealpathForwarded(abs, nullptr);
}

IORELAY_EXPORT int access(const char* path, int mode) noexcept {
  return AccessPath(path, mode, REAL(access));
}

IORELAY_EXPORT int faccessat(int dirfd, const char* path, int mode, int flags) noexcept {
  AbsPath abs;
  if (!ForwardedPath(dirfd, path, &abs))
    return REAL(faccessat)(dirfd, LibcPath(path, abs), mode, flags);
  if (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) return Fail(EINVAL);
  // A link itself has mode 0777, as the kernel answers; the daemon's access follows links.
  if (flags & AT_SYMLINK_NOFOLLOW) {
    struct stat st;
    if (iorelay_stat(g_client, abs.c_str(), &st, 1) == 0 && S_ISLNK(st.st_mode)) return 0;
  }
  return OrOutOfTheTree(iorelay_access(g_client, abs.c_str(), mode), &abs,
                        (flags & AT_SYMLINK_NOFOLLOW) == 0,
                        [&](const char* p) { return REAL(faccessat)(AT_FDCWD, p, mode, flags); });
}

IORELAY_EXPORT int euidaccess(const char* path, int mode) noexcept {
  return AccessPath(path, mode, REAL(euidaccess));
}

IORELAY_EXPORT int eaccess(const char* path, int mode) noexcept {
  return AccessPath(path, mode, REAL(eaccess));
}

IORELAY_EXPORT int unlink(const char* path) noexcept {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(unlink)(LibcPath(path, abs));
  if (int rc; RefusesDots(path, abs, EISDIR, EISDIR, &rc)) return rc;
  return OrOutOfTheTree(iorelay_unlink(g_client, abs.c_str()), &abs, false, REAL(unlink));
}

IORELAY_EXPORT int unlinkat(int dirfd, const char* path, int flags) noexcept {
  AbsPath abs;
  if (!ForwardedPath(dirfd, path, &abs)) return REAL(unlinkat)(dirfd, LibcPath(path, abs), flags);
  const bool dir = (flags & AT_REMOVEDIR) != 0;
  if (int rc; RefusesDots(path, abs, dir ? EINVAL : EISDIR, dir ? ENOTEMPTY : EISDIR, &rc))
    return rc;
  if (flags & ~AT_REMOVEDIR) return Fail(EINVAL);
  return OrOutOfTheTree((flags & AT_REMOVEDIR) ? iorelay_rmdir(g_client, abs.c_str())
                                               : iorelay_unlink(g_client, abs.c_str()),
                        &abs, false,
                        [&](const char* p) { return REAL(unlinkat)(AT_FDCWD, p, flags); });
}

// glibc's remove() calls its internal unlink/rmdir, which no interposer sees.
IORELAY_EXPORT int remove(const char* path) noexcept {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(remove)(LibcPath(path, abs));
  if (int rc; RefusesDots(path, abs, EINVAL, ENOTEMPTY, &rc)) return rc;
  int rc = iorelay_unlink(g_client, abs.c_str());
  if (rc == -EISDIR || rc == -EPERM) rc = iorelay_rmdir(g_client, abs.c_str());
  return OrOutOfTheTree(rc, &abs, false, REAL(remove));
}

IORELAY_EXPORT int mkdir(const char* path, mode_t mode) noexcept {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(mkdir)(LibcPath(path, abs), mode);
  if (int rc; RefusesDots(path, abs, EEXIST, EEXIST, &rc)) return rc;
  return OrOutOfTheTree(iorelay_mkdir(g_client, abs.c_str(), CreationMode(mode)), &abs, false,
                        [&](const char* p) { return REAL(mkdir)(p, mode); });
}

IORELAY_EXPORT int mkdirat(int dirfd, const char* path, mode_t mode) noexcept {
  AbsPath abs;
  if (!ForwardedPath(dirfd, path, &abs)) return REAL(mkdirat)(dirfd, LibcPath(path, abs), mode);
  if (int rc; RefusesDots(path, abs, EEXIST, EEXIST, &rc)) return rc;
  return OrOutOfTheTree(iorelay_mkdir(g_client, abs.c_str(), CreationMode(mode)), &abs, false,
                        [&](const char* p) { return REAL(mkdir)(p, mode); });
}

// The mask applies to forwarded creates too (CreationMode): the daemon applies none.
IORELAY_EXPORT mode_t umask(mode_t mask) noexcept {
  const auto old = static_cast<mode_t>(syscall(SYS_umask, mask));
  RecordUmask(mask);
  return old;
}

IORELAY_EXPORT int chmod(const char* path, mode_t mode) noexcept {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(chmod)(LibcPath(path, abs), mode);
  return OrOutOfTheTree(iorelay_chmod(g_client, abs.c_str(), mode), &abs, true,
                        [&](const char* p) { return REAL(chmod)(p, mode); });
}

IORELAY_EXPORT int fchmodat(int dirfd, const char* path, mode_t mode, int flags) noexcept {
  AbsPath abs;
  if (!ForwardedPath(dirfd, path, &abs))
    return REAL(fchmodat)(dirfd, LibcPath(path, abs), mode, flags);
  // Linux cannot change a symbolic link's mode: glibc answers AT_SYMLINK_NOFOLLOW with
  // EOPNOTSUPP, and so do we.
  if (flags != 0) return FromClient(flags == AT_SYMLINK_NOFOLLOW ? -EOPNOTSUPP : -EINVAL);
  return OrOutOfTheTree(iorelay_chmod(g_client, abs.c_str(), mode), &abs, true,
                        [&](const char* p) { return REAL(chmod)(p, mode); });
}

IORELAY_EXPORT int mknod(const char* path, mode_t mode, dev_t dev) noexcept {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(mknod)(LibcPath(path, abs), mode, dev);
  if (int rc; RefusesDots(path, abs, EEXIST, EEXIST, &rc)) return rc;
  return MknodForwarded(&abs, mode, [&](const char* p) { return REAL(mknod)(p, mode, dev); });
}

IORELAY_EXPORT int mknodat(int dirfd, const char* path, mode_t mode, dev_t dev) noexcept {
  AbsPath abs;
  if (!ForwardedPath(dirfd, path, &abs))
    return REAL(mknodat)(dirfd, LibcPath(path, abs), mode, dev);
  if (int rc; RefusesDots(path, abs, EEXIST, EEXIST, &rc)) return rc;
  return MknodForwarded(&abs, mode, [&](const char* p) { return REAL(mknod)(p, mode, dev); });
}

IORELAY_EXPORT int mkfifo(const char* path, mode_t mode) noexcept {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(mkfifo)(LibcPath(path, abs), mode);
  if (int rc; RefusesDots(path, abs, EEXIST, EEXIST, &rc)) return rc;
  return MknodForwarded(&abs, S_IFIFO | mode, [&](const char* p) { return REAL(mkfifo)(p, mode); });
}

IORELAY_EXPORT int mkfifoat(int dirfd, const char* path, mode_t mode) noexcept {
  AbsPath abs;
  if (!ForwardedPath(dirfd, path, &abs)) return REAL(mkfifoat)(dirfd, LibcPath(path, abs), mode);
  if (int rc; RefusesDots(path, abs, EEXIST, EEXIST, &rc)) return rc;
  return MknodForwarded(&abs, S_IFIFO | mode, [&](const char* p) { return REAL(mkfifo)(p, mode); });
}

IORELAY_EXPORT int rmdir(const char* path) noexcept {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(rmdir)(LibcPath(path, abs));
  if (int rc; RefusesDots(path, abs, EINVAL, ENOTEMPTY, &rc)) return rc;
  return OrOutOfTheTree(iorelay_rmdir(g_client, abs.c_str()), &abs, false, REAL(rmdir));
}

IORELAY_EXPORT int rename(const char* from, const char* to) noexcept {
  int rc;
  if (RenameAt(AT_FDCWD, from, AT_FDCWD, to, 0, &rc)) return rc;
  return REAL(rename)(from, to);
}

IORELAY_EXPORT int renameat(int olddir, const char* from, int newdir, const char* to) noexcept {
  int rc;
  if (RenameAt(olddir, from, newdir, to, 0, &rc)) return rc;
  return REAL(renameat)(olddir, from, newdir, to);
}

IORELAY_EXPORT int renameat2(int olddir, const char* from, int newdir, const char* to,
                             unsigned flags) noexcept {
  int rc;
  if (RenameAt(olddir, from, newdir, to, flags, &rc)) return rc;
  return REAL(renameat2)(olddir, from, newdir, to, flags);
}

IORELAY_EXPORT int symlink(const char* target, const char* path) noexcept {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(symlink)(target, LibcPath(path, abs));
  if (int rc; RefusesDots(path, abs, EEXIST, EEXIST, &rc)) return rc;
  return OrOutOfTheTree(iorelay_symlink(g_client, target, abs.c_str()), &abs, false,
                        [&](const char* p) { return REAL(symlink)(target, p); });
}

IORELAY_EXPORT int symlinkat(const char* target, int dirfd, const char* path) noexcept {
  AbsPath abs;
  if (!ForwardedPath(dirfd, path, &abs)) return REAL(symlinkat)(target, dirfd, LibcPath(path, abs));
  if (int rc; RefusesDots(path, abs, EEXIST, EEXIST, &rc)) return rc;
  return OrOutOfTheTree(iorelay_symlink(g_client, target, abs.c_str()), &abs, false,
                        [&](const char* p) { return REAL(symlink)(target, p); });
}

IORELAY_EXPORT int link(const char* from, const char* to) noexcept {
  int rc;
  if (LinkAt(AT_FDCWD, from, AT_FDCWD, to, 0, &rc)) return rc;
  return REAL(link)(from, to);
}

IORELAY_EXPORT int linkat(int olddir, const char* from, int newdir, const char* to,
                          int flags) noexcept {
  int rc;
  if (LinkAt(olddir, from, newdir, to, flags, &rc)) return rc;
  return REAL(linkat)(olddir, from, newdir, to, flags);
}

IORELAY_EXPORT ssize_t readlink(const char* path, char* buf, size_t size) noexcept {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(readlink)(LibcPath(path, abs), buf, size);
  return OrOutOfTheTree(iorelay_readlink(g_client, abs.c_str(), buf, size), &abs, false,
                        [&](const char* p) { return REAL(readlink)(p, buf, size); });
}

IORELAY_EXPORT ssize_t readlinkat(int dirfd, const char* path, char* buf, size_t size) noexcept {
  AbsPath abs;
  if (!ForwardedPath(dirfd, path, &abs))
    return REAL(readlinkat)(dirfd, LibcPath(path, abs), buf, size);
  return OrOutOfTheTree(iorelay_readlink(g_client, abs.c_str(), buf, size), &abs, false,
                        [&](const char* p) { return REAL(readlink)(p, buf, size); });
}

IORELAY_EXPORT int truncate(const char* path, off_t len) noexcept {
  return TruncatePath(path, len, REAL(truncate));
}

IORELAY_EXPORT int truncate64(const char* path, off64_t len) noexcept {
  return TruncatePath(path, len, REAL(truncate64));
}

}  // extern "C"
