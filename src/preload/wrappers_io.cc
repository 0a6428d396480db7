// Data transfer on descriptors: read/write and their positional, vectored and
// fortified forms. Non-forwarded descriptors cost one acquire load before libc.
#include <sys/uio.h>

#include "preload/libc_next.h"
#include "preload/state.h"
#include "preload/with_file.h"

using namespace iorelay::preload;

namespace {

// preadv2/pwritev2: offset -1 means the file offset. RWF_HIPRI is a hint; RWF_DSYNC
// and RWF_SYNC become an fsync after the write; the rest are refused.
ssize_t Preadv2(int fd, const struct iovec* iov, int n, off_t off, int flags) {
  if (flags & ~RWF_HIPRI) return Fail(EOPNOTSUPP);
  return WithFile<ssize_t>(fd, [&](iorelay_file* f) {
    return off == -1 ? iorelay_readv(f, iov, n) : iorelay_preadv(f, iov, n, off);
  });
}

ssize_t Pwritev2(int fd, const struct iovec* iov, int n, off_t off, int flags) {
  if (flags & ~(RWF_HIPRI | RWF_DSYNC | RWF_SYNC)) return Fail(EOPNOTSUPP);
  return WithFile<ssize_t, kDirWrite>(fd, [&](iorelay_file* f) -> ssize_t {
    ssize_t rc = off == -1 ? iorelay_writev(f, iov, n) : iorelay_pwritev(f, iov, n, off);
    if (rc >= 0 && (flags & (RWF_DSYNC | RWF_SYNC))) {
      int s = iorelay_fsync(f, (flags & RWF_SYNC) ? 0 : 1);
      if (s < 0) return s;
    }
    return rc;
  });
}

// The forwarded halves, out of line so that each wrapper's libc path is a bounds
// check, one load and a tail call.
[[gnu::noinline]] ssize_t Forwarded_read(int fd, void* buf, size_t n) {
  return WithFile<ssize_t>(fd, [&](iorelay_file* f) { return iorelay_read(f, buf, n); });
}

[[gnu::noinline]] ssize_t Forwarded_write(int fd, const void* buf, size_t n) {
  return WithFile<ssize_t, kDirWrite>(fd,
                                      [&](iorelay_file* f) { return iorelay_write(f, buf, n); });
}

[[gnu::noinline]] ssize_t Forwarded_pread(int fd, void* buf, size_t n, off_t off) {
  return WithFile<ssize_t>(fd, [&](iorelay_file* f) { return iorelay_pread(f, buf, n, off); });
}

[[gnu::noinline]] ssize_t Forwarded_pread64(int fd, void* buf, size_t n, off64_t off) {
  return WithFile<ssize_t>(fd, [&](iorelay_file* f) { return iorelay_pread(f, buf, n, off); });
}

[[gnu::noinline]] ssize_t Forwarded_pwrite(int fd, const void* buf, size_t n, off_t off) {
  return WithFile<ssize_t, kDirWrite>(
      fd, [&](iorelay_file* f) { return iorelay_pwrite(f, buf, n, off); });
}

[[gnu::noinline]] ssize_t Forwarded_pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  return WithFile<ssize_t, kDirWrite>(
      fd, [&](iorelay_file* f) { return iorelay_pwrite(f, buf, n, off); });
}

[[gnu::noinline]] ssize_t Forwarded_readv(int fd, const struct iovec* iov, int n) {
  return WithFile<ssize_t>(fd, [&](iorelay_file* f) { return iorelay_readv(f, iov, n); });
}

[[gnu::noinline]] ssize_t Forwarded_writev(int fd, const struct iovec* iov, int n) {
  return WithFile<ssize_t, kDirWrite>(fd,
                                      [&](iorelay_file* f) { return iorelay_writev(f, iov, n); });
}

[[gnu::noinline]] ssize_t Forwarded_preadv(int fd, const struct iovec* iov, int n, off_t off) {
  return WithFile<ssize_t>(fd, [&](iorelay_file* f) { return iorelay_preadv(f, iov, n, off); });
}

[[gnu::noinline]] ssize_t Forwarded_preadv64(int fd, const struct iovec* iov, int n, off64_t off) {
  return WithFile<ssize_t>(fd, [&](iorelay_file* f) { return iorelay_preadv(f, iov, n, off); });
}

[[gnu::noinline]] ssize_t Forwarded_pwritev(int fd, const struct iovec* iov, int n, off_t off) {
  return WithFile<ssize_t, kDirWrite>(
      fd, [&](iorelay_file* f) { return iorelay_pwritev(f, iov, n, off); });
}

[[gnu::noinline]] ssize_t Forwarded_pwritev64(int fd, const struct iovec* iov, int n, off64_t off) {
  return WithFile<ssize_t, kDirWrite>(
      fd, [&](iorelay_file* f) { return iorelay_pwritev(f, iov, n, off); });
}

}  // namespace

extern "C" {

IORELAY_EXPORT ssize_t read(int fd, void* buf, size_t n) {
  if (!IsForwardedFd(fd)) return REAL(read)(fd, buf, n);
  return Forwarded_read(fd, buf, n);
}

IORELAY_EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  if (!IsForwardedFd(fd)) return REAL(write)(fd, buf, n);
  return Forwarded_write(fd, buf, n);
}

IORELAY_EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  if (n > buflen) __chk_fail();
  return read(fd, buf, n);
}

IORELAY_EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  if (!IsForwardedFd(fd)) return REAL(pread)(fd, buf, n, off);
  return Forwarded_pread(fd, buf, n, off);
}

IORELAY_EXPORT ssize_t pread64(int fd, void* buf, size_t n, off64_t off) {
  if (!IsForwardedFd(fd)) return REAL(pread64)(fd, buf, n, off);
  return Forwarded_pread64(fd, buf, n, off);
}

IORELAY_EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
  if (n > buflen) __chk_fail();
  return pread(fd, buf, n, off);
}

IORELAY_EXPORT ssize_t __pread64_chk(int fd, void* buf, size_t n, off64_t off, size_t buflen) {
  if (n > buflen) __chk_fail();
  return pread64(fd, buf, n, off);
}

IORELAY_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  if (!IsForwardedFd(fd)) return REAL(pwrite)(fd, buf, n, off);
  return Forwarded_pwrite(fd, buf, n, off);
}

IORELAY_EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  if (!IsForwardedFd(fd)) return REAL(pwrite64)(fd, buf, n, off);
  return Forwarded_pwrite64(fd, buf, n, off);
}

IORELAY_EXPORT ssize_t readv(int fd, const struct iovec* iov, int n) {
  if (!IsForwardedFd(fd)) return REAL(readv)(fd, iov, n);
  return Forwarded_readv(fd, iov, n);
}

IORELAY_EXPORT ssize_t writev(int fd, const struct iovec* iov, int n) {
  if (!IsForwardedFd(fd)) return REAL(writev)(fd, iov, n);
  return Forwarded_writev(fd, iov, n);
}

IORELAY_EXPORT ssize_t preadv(int fd, const struct iovec* iov, int n, off_t off) {
  if (!IsForwardedFd(fd)) return REAL(preadv)(fd, iov, n, off);
  return Forwarded_preadv(fd, iov, n, off);
}

IORELAY_EXPORT ssize_t preadv64(int fd, const struct iovec* iov, int n, off64_t off) {
  if (!IsForwardedFd(fd)) return REAL(preadv64)(fd, iov, n, off);
  return Forwarded_preadv64(fd, iov, n, off);
}

IORELAY_EXPORT ssize_t pwritev(int fd, const struct iovec* iov, int n, off_t off) {
  if (!IsForwardedFd(fd)) return REAL(pwritev)(fd, iov, n, off);
  return Forwarded_pwritev(fd, iov, n, off);
}

IORELAY_EXPORT ssize_t pwritev64(int fd, const struct iovec* iov, int n, off64_t off) {
  if (!IsForwardedFd(fd)) return REAL(pwritev64)(fd, iov, n, off);
  return Forwarded_pwritev64(fd, iov, n, off);
}

IORELAY_EXPORT ssize_t preadv2(int fd, const struct iovec* iov, int n, off_t off, int flags) {
  if (!IsForwardedFd(fd)) return REAL(preadv2)(fd, iov, n, off, flags);
  return Preadv2(fd, iov, n, off, flags);
}

IORELAY_EXPORT ssize_t preadv64v2(int fd, const struct iovec* iov, int n, off64_t off, int flags) {
  if (!IsForwardedFd(fd)) return REAL(preadv64v2)(fd, iov, n, off, flags);
  return Preadv2(fd, iov, n, off, flags);
}

IORELAY_EXPORT ssize_t pwritev2(int fd, const struct iovec* iov, int n, off_t off, int flags) {
  if (!IsForwardedFd(fd)) return REAL(pwritev2)(fd, iov, n, off, flags);
  return Pwritev2(fd, iov, n, off, flags);
}

IORELAY_EXPORT ssize_t pwritev64v2(int fd, const struct iovec* iov, int n, off64_t off, int flags) {
  if (!IsForwardedFd(fd)) return REAL(pwritev64v2)(fd, iov, n, off, flags);
  return Pwritev2(fd, iov, n, off, flags);
}

}  // extern "C"
