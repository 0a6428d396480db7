// Extended attributes on forwarded paths and descriptors: not in the protocol, so
// they answer ENOTSUP, as a file system without xattrs does (ls, cp -a, tar cope).
#include <sys/xattr.h>

#include "preload/libc_next.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

bool Forwarded(const char* path) {
  AbsPath abs;
  return ForwardedPath(AT_FDCWD, path, &abs);
}

}  // namespace

extern "C" {

IORELAY_EXPORT ssize_t getxattr(const char* p, const char* n, void* v, size_t s) noexcept {
  return Forwarded(p) ? Fail(ENOTSUP) : REAL(getxattr)(p, n, v, s);
}
IORELAY_EXPORT ssize_t lgetxattr(const char* p, const char* n, void* v, size_t s) noexcept {
  return Forwarded(p) ? Fail(ENOTSUP) : REAL(lgetxattr)(p, n, v, s);
}
IORELAY_EXPORT ssize_t fgetxattr(int fd, const char* n, void* v, size_t s) noexcept {
  return IsForwardedFd(fd) ? Fail(ENOTSUP) : REAL(fgetxattr)(fd, n, v, s);
}
IORELAY_EXPORT ssize_t listxattr(const char* p, char* l, size_t s) noexcept {
  return Forwarded(p) ? Fail(ENOTSUP) : REAL(listxattr)(p, l, s);
}
IORELAY_EXPORT ssize_t llistxattr(const char* p, char* l, size_t s) noexcept {
  return Forwarded(p) ? Fail(ENOTSUP) : REAL(llistxattr)(p, l, s);
}
IORELAY_EXPORT ssize_t flistxattr(int fd, char* l, size_t s) noexcept {
  return IsForwardedFd(fd) ? Fail(ENOTSUP) : REAL(flistxattr)(fd, l, s);
}
IORELAY_EXPORT int setxattr(const char* p, const char* n, const void* v, size_t s, int f) noexcept {
  return Forwarded(p) ? Fail(ENOTSUP) : REAL(setxattr)(p, n, v, s, f);
}
IORELAY_EXPORT int lsetxattr(const char* p, const char* n, const void* v, size_t s,
                             int f) noexcept {
  return Forwarded(p) ? Fail(ENOTSUP) : REAL(lsetxattr)(p, n, v, s, f);
}
IORELAY_EXPORT int fsetxattr(int fd, const char* n, const void* v, size_t s, int f) noexcept {
  return IsForwardedFd(fd) ? Fail(ENOTSUP) : REAL(fsetxattr)(fd, n, v, s, f);
}
IORELAY_EXPORT int removexattr(const char* p, const char* n) noexcept {
  return Forwarded(p) ? Fail(ENOTSUP) : REAL(removexattr)(p, n);
}
IORELAY_EXPORT int lremovexattr(const char* p, const char* n) noexcept {
  return Forwarded(p) ? Fail(ENOTSUP) : REAL(lremovexattr)(p, n);
}
IORELAY_EXPORT int fremovexattr(int fd, const char* n) noexcept {
  return IsForwardedFd(fd) ? Fail(ENOTSUP) : REAL(fremovexattr)(fd, n);
}

}  // extern "C"
