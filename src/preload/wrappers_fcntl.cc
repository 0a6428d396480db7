// fcntl on forwarded descriptors: FD_CLOEXEC mirrored on the placeholder, status flags
// and record locks from the daemon, F_DUPFD sharing the open file. F_OFD_* is EINVAL. flock and
// lockf are record locks too.
#include <stdarg.h>
#include <sys/file.h>
#include <unistd.h>

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
    case F_GETPIPE_SZ:
    case F_SETPIPE_SZ:
      return Fail(EBADF);  // not a pipe, as locally
    default:
      return Fail(EINVAL);  // leases, owners, signals, seals: not for files here
  }
}

// flock as whole-file record locks, as Linux's NFS client emulates it: LOCK_SH a read lock,
// LOCK_EX a write lock, LOCK_UN their release; they conflict with fcntl locks on the file and
// belong to the process, not to the open file description.
int FlockForwarded(int fd, int op) {
  struct flock lk = {};
  lk.l_whence = SEEK_SET;
  switch (op & ~LOCK_NB) {
    case LOCK_SH:
      lk.l_type = F_RDLCK;
      break;
    case LOCK_EX:
      lk.l_type = F_WRLCK;
      break;
    case LOCK_UN:
      lk.l_type = F_UNLCK;
      break;
    default:
      return Fail(EINVAL);
  }
  int rc = FcntlForwarded(fd, (op & LOCK_NB) != 0 ? F_SETLK : F_SETLKW, &lk);
  if (rc != 0 && (errno == EACCES || errno == EAGAIN)) errno = EWOULDBLOCK;
  return rc;
}

// lockf: a write lock on [offset, offset + len) (len 0: to the end, and beyond), as glibc's lockf
// is over fcntl.
int LockfForwarded(int fd, int cmd, off64_t len) {
  struct flock lk = {};
  lk.l_whence = SEEK_CUR;
  lk.l_len = len;
  lk.l_type = F_WRLCK;
  switch (cmd) {
    case F_TEST:
      if (FcntlForwarded(fd, F_GETLK, &lk) != 0) return -1;
      return lk.l_type == F_UNLCK || lk.l_pid == getpid() ? 0 : Fail(EACCES);
    case F_ULOCK:
      lk.l_type = F_UNLCK;
      return FcntlForwarded(fd, F_SETLK, &lk);
    case F_LOCK:
      return FcntlForwarded(fd, F_SETLKW, &lk);
    case F_TLOCK:
      return FcntlForwarded(fd, F_SETLK, &lk);
    default:
      return Fail(EINVAL);
  }
}

}  // namespace

extern "C" {

IORELAY_EXPORT int flock(int fd, int op) noexcept {
  if (!IsForwardedFd(fd)) return REAL(flock)(fd, op);
  return FlockForwarded(fd, op);
}

IORELAY_EXPORT int lockf(int fd, int cmd, off_t len) {
  if (!IsForwardedFd(fd)) return REAL(lockf)(fd, cmd, len);
  return LockfForwarded(fd, cmd, len);
}

IORELAY_EXPORT int lockf64(int fd, int cmd, off64_t len) {
  if (!IsForwardedFd(fd)) return REAL(lockf64)(fd, cmd, len);
  return LockfForwarded(fd, cmd, len);
}

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
