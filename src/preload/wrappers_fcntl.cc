// fcntl on forwarded descriptors: FD_CLOEXEC mirrored on the placeholder, status flags
// and record locks from the daemon, F_DUPFD sharing the open file. F_OFD_* is EINVAL.
#include <stdarg.h>

#include "preload/fd_ops.h"
#include "preload/libc_next.h"
#include "preload/state.h"
#include "preload/with_file.h"

using namespace iorelay::preload;

namespace {

int DupFd(int fd, int cmd, long min_fd) {
  FdTable::Ref src = g_table.Acquire(fd);
  if (!src) return Fail(EBADF);
  int newfd = REAL(fcntl)(fd, cmd, min_fd);  // duplicates the placeholder
  if (newfd < 0) return newfd;
  if (static_cast<size_t>(newfd) >= g_table.capacity() ||
      !InstallDuplicate(newfd, *src, cmd == F_DUPFD_CLOEXEC)) {
    ClosePlaceholder(newfd);
    return Fail(EMFILE);
  }
  return newfd;
}

int FcntlForwarded(int fd, int cmd, void* arg) {
  long iarg = reinterpret_cast<long>(arg);
  switch (cmd) {
    case F_DUPFD:
    case F_DUPFD_CLOEXEC:
      return DupFd(fd, cmd, iarg);
    case F_GETFD:
      return REAL(fcntl)(fd, F_GETFD);
    case F_SETFD: {
      FdTable::Ref e = g_table.Acquire(fd);
      if (!e) return Fail(EBADF);
      int rc = REAL(fcntl)(fd, F_SETFD, iarg);
      if (rc == 0) e->cloexec.store((iarg & FD_CLOEXEC) != 0, std::memory_order_relaxed);
      return rc;
    }
    case F_GETFL: {
      FdTable::Ref e = g_table.Acquire(fd);
      if (!e) return Fail(EBADF);
      if (e->file == nullptr) return e->open_flags & (O_ACCMODE | O_PATH | O_DIRECTORY);
      return FromClient(iorelay_getfl(e->file));
    }
    case F_SETFL:
      return WithFile<int>(
          fd, [&](iorelay_file* f) { return iorelay_setfl(f, static_cast<int>(iarg)); });
    case F_GETLK:
    case F_SETLK:
    case F_SETLKW:
      if (arg == nullptr) return Fail(EFAULT);
      return WithFile<int>(fd, [&](iorelay_file* f) {
        return iorelay_lock(f, cmd, static_cast<struct flock*>(arg));
      });
    case F_OFD_GETLK:
    case F_OFD_SETLK:
    case F_OFD_SETLKW:
      return Fail(EINVAL);  // open-file-description locks: not in the protocol yet
    default:
      return Fail(EINVAL);  // leases, owners, signals, pipes, seals: not for files here
  }
}

}  // namespace

extern "C" {

IORELAY_EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (!IsForwardedFd(fd)) return REAL(fcntl)(fd, cmd, arg);
  return FcntlForwarded(fd, cmd, arg);
}

IORELAY_EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (!IsForwardedFd(fd)) return REAL(fcntl64)(fd, cmd, arg);
  return FcntlForwarded(fd, cmd, arg);
}

}  // extern "C"
