// open() and its aliases: forwarded paths become placeholder descriptors with a table
// entry; every other path goes to libc untouched.
#include <stdarg.h>

#include "preload/fd_ops.h"
#include "preload/libc_next.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

bool TakesMode(int flags) { return (flags & O_CREAT) != 0 || (flags & __O_TMPFILE) == __O_TMPFILE; }

// Forwarded: opens and returns true with *fd set. Not forwarded, or through a link out of the
// tree: returns false with *path the one libc must get (it may point into *abs).
bool MaybeOpenForwarded(int dirfd, const char** path, AbsPath* abs, int flags, mode_t mode,
                        int* fd) {
  if (!ForwardedPath(dirfd, *path, abs)) {
    *path = LibcPath(*path, *abs);
    return false;
  }
  *fd = OpenForwarded(abs->c_str(), flags, mode);
  if (*fd < 0 && LeadsOutOfTheTree(errno, abs->c_str(), (flags & O_NOFOLLOW) == 0, abs)) {
    *path = abs->c_str();  // a link out of the tree: libc opens its target
    return false;
  }
  return true;
}

}  // namespace

#define IORELAY_VA_MODE(flags) \
  mode_t mode = 0;             \
  if (TakesMode(flags)) {      \
    va_list ap;                \
    va_start(ap, flags);       \
    mode = va_arg(ap, mode_t); \
    va_end(ap);                \
  }

extern "C" {

IORELAY_EXPORT int open(const char* path, int flags, ...) {
  IORELAY_VA_MODE(flags);
  int fd;
  AbsPath abs;
  if (MaybeOpenForwarded(AT_FDCWD, &path, &abs, flags, mode, &fd)) return fd;
  return REAL(open)(path, flags, mode);
}

IORELAY_EXPORT int open64(const char* path, int flags, ...) {
  IORELAY_VA_MODE(flags);
  int fd;
  AbsPath abs;
  if (MaybeOpenForwarded(AT_FDCWD, &path, &abs, flags, mode, &fd)) return fd;
  return REAL(open64)(path, flags, mode);
}

IORELAY_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  IORELAY_VA_MODE(flags);
  int fd;
  AbsPath abs;
  if (MaybeOpenForwarded(dirfd, &path, &abs, flags, mode, &fd)) return fd;
  return REAL(openat)(dirfd, path, flags, mode);
}

IORELAY_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  IORELAY_VA_MODE(flags);
  int fd;
  AbsPath abs;
  if (MaybeOpenForwarded(dirfd, &path, &abs, flags, mode, &fd)) return fd;
  return REAL(openat64)(dirfd, path, flags, mode);
}

// The _FORTIFY_SOURCE entry points: called without a mode (O_CREAT is refused).
IORELAY_EXPORT int __open_2(const char* path, int flags) {
  int fd;
  AbsPath abs;
  if (!TakesMode(flags) && MaybeOpenForwarded(AT_FDCWD, &path, &abs, flags, 0, &fd)) return fd;
  return REAL(__open_2)(path, flags);
}

IORELAY_EXPORT int __open64_2(const char* path, int flags) {
  int fd;
  AbsPath abs;
  if (!TakesMode(flags) && MaybeOpenForwarded(AT_FDCWD, &path, &abs, flags, 0, &fd)) return fd;
  return REAL(__open64_2)(path, flags);
}

IORELAY_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  int fd;
  AbsPath abs;
  if (!TakesMode(flags) && MaybeOpenForwarded(dirfd, &path, &abs, flags, 0, &fd)) return fd;
  return REAL(__openat_2)(dirfd, path, flags);
}

IORELAY_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  int fd;
  AbsPath abs;
  if (!TakesMode(flags) && MaybeOpenForwarded(dirfd, &path, &abs, flags, 0, &fd)) return fd;
  return REAL(__openat64_2)(dirfd, path, flags);
}

IORELAY_EXPORT int creat(const char* path, mode_t mode) {
  int fd;
  AbsPath abs;
  if (MaybeOpenForwarded(AT_FDCWD, &path, &abs, O_WRONLY | O_CREAT | O_TRUNC, mode, &fd)) return fd;
  return REAL(creat)(path, mode);
}

IORELAY_EXPORT int creat64(const char* path, mode_t mode) {
  int fd;
  AbsPath abs;
  if (MaybeOpenForwarded(AT_FDCWD, &path, &abs, O_WRONLY | O_CREAT | O_TRUNC, mode, &fd)) return fd;
  return REAL(creat64)(path, mode);
}

}  // extern "C"
