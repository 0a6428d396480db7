// Direct (daemon-less) file access through syscall(), never the interposed libc wrappers.
#include "client/direct.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "client/internal_fds.h"

namespace iorelay::client {

long Sys(long r) { return r < 0 ? -errno : r; }

int OpenDirect(Client* c, const char* path, int flags, mode_t mode) {
  std::string real = DirectPath(c->config(), path);
  int fd =
      static_cast<int>(Sys(syscall(SYS_openat, AT_FDCWD, real.c_str(), flags | O_CLOEXEC, mode)));
  return fd < 0 ? fd : AdoptInternalFd(fd);
}

bool SwitchToDirect(iorelay_file* f) {
  if (f->client->config().fallback != Fallback::kDirect) return false;
  MutexLock l(f->direct_mu);
  if (f->direct_fd.load() >= 0) return true;
  int flags = f->open_flags & ~(O_CREAT | O_EXCL | O_TRUNC);
  int fd = OpenDirect(f->client, f->path.c_str(), flags, 0);
  if (fd < 0) return false;
  syscall(SYS_lseek, fd, static_cast<off_t>(f->offset.load()), SEEK_SET);
  f->direct_fd.store(fd);
  return true;
}

ssize_t DirectIo(int fd, IoKind kind, const struct iovec* iov, int iovcnt, off_t offset) {
  switch (kind) {
    case IoKind::kPread:
      return Sys(syscall(SYS_preadv, fd, iov, iovcnt, offset, 0));
    case IoKind::kPwrite:
      return Sys(syscall(SYS_pwritev, fd, iov, iovcnt, offset, 0));
    case IoKind::kRead:
      return Sys(syscall(SYS_readv, fd, iov, iovcnt));
    case IoKind::kWrite:
      return Sys(syscall(SYS_writev, fd, iov, iovcnt));
  }
  return -EINVAL;
}

}  // namespace iorelay::client
