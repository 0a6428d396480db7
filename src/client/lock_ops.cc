// Process-associated record locks: ranges made absolute here, sent to the daemon that owns
// the file's locks (by identity, whatever the placement) through a session that holds the
// file open there (the lock anchor, when that is not the file's daemon), released on close.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <limits>

#include "client/file_ops.h"
#include "client/placement.h"

namespace proto = iorelay::proto;
using iorelay::Result;
using iorelay::client::Client;

namespace iorelay::client {

int Client::EnsureLockAnchor(iorelay_file* f, int owner) {
  MutexLock l(locks_mu_);
  LockState& s = locks_[{f->dev, f->ino}];
  if (s.anchor_handle != 0 && s.anchor_server == owner) return 0;
  // Opened without creating, truncating or appending, in the access mode the description was
  // allowed: it only proves to the owner that this process holds the file.
  proto::OpenRequest req{f->path, f->open_flags & O_ACCMODE, 0};
  CallReply reply;
  Outcome r = Call(owner, {.op = proto::Op::kOpen, .fields = proto::EncodeFields(req)}, &reply);
  if (!r.ok()) return r.NegErrno();
  proto::OpenReply rep;
  if (!proto::DecodeFields(reply.payload, &rep).ok()) return -EIO;
  if (rep.attrs.dev != f->dev || rep.attrs.ino != f->ino) {
    // The path names another file now (renamed or replaced since the open).
    (void)Post(owner, {.op = proto::Op::kClose,
                       .fields = proto::EncodeFields(proto::HandleRequest{rep.handle}),
                       .generation = reply.generation});
    return -ENOLCK;
  }
  s.anchor_server = owner;
  s.anchor_handle = rep.handle;
  s.anchor_generation = reply.generation;
  return 0;
}

void Client::NoteLocked(uint64_t dev, uint64_t ino) {
  MutexLock l(locks_mu_);
  locks_[{dev, ino}].locked = true;
}

int Client::ReleaseLocks(iorelay_file* f) {
  LockState s;
  {
    MutexLock l(locks_mu_);
    auto it = locks_.find({f->dev, f->ino});
    if (it == locks_.end()) return 0;
    s = it->second;
    locks_.erase(it);
  }
  int rc = 0;
  if (s.locked && f->direct_fd.load() < 0) {
    int owner = LockServer(f->dev, f->ino);
    rc = CallMsg<proto::UnlockAllRequest, proto::Empty>(
             owner, proto::Op::kUnlockAll, proto::UnlockAllRequest{f->dev, f->ino}, nullptr)
             .NegErrno();
  }
  if (s.anchor_handle != 0) {
    (void)Post(s.anchor_server,
               {.op = proto::Op::kClose,
                .fields = proto::EncodeFields(proto::HandleRequest{s.anchor_handle}),
                .generation = s.anchor_generation});
  }
  return rc;
}

}  // namespace iorelay::client

extern "C" {

int iorelay_lock(iorelay_file* f, int cmd, struct flock* lk) {
  if (!f) return -EBADF;
  if (!lk) return -EFAULT;
  if (cmd != F_GETLK && cmd != F_SETLK && cmd != F_SETLKW) return -EINVAL;
  if (lk->l_type != F_RDLCK && lk->l_type != F_WRLCK && lk->l_type != F_UNLCK) return -EINVAL;
  if (cmd == F_GETLK && lk->l_type == F_UNLCK) return -EINVAL;  // as fcntl(2)
  if (int fd = f->direct_fd.load(); fd >= 0) {
    return static_cast<int>(iorelay::client::Sys(syscall(SYS_fcntl, fd, cmd, lk)));
  }
  // As a local file system: a lock needs the matching access mode (not for F_GETLK).
  int mode = f->status_flags.load() & O_ACCMODE;
  if (cmd != F_GETLK && ((lk->l_type == F_RDLCK && mode == O_WRONLY) ||
                         (lk->l_type == F_WRLCK && mode == O_RDONLY))) {
    return -EBADF;
  }
  int64_t base = 0;
  if (lk->l_whence == SEEK_CUR) {
    off_t cur = iorelay_lseek(f, 0, SEEK_CUR);
    if (cur < 0) return static_cast<int>(cur);
    base = cur;
  } else if (lk->l_whence == SEEK_END) {
    struct stat st;
    int r = iorelay_fstat(f, &st);
    if (r < 0) return r;
    base = st.st_size;
  } else if (lk->l_whence != SEEK_SET) {
    return -EINVAL;
  }
  int64_t start = 0;
  if (__builtin_add_overflow(base, static_cast<int64_t>(lk->l_start), &start)) return -EOVERFLOW;
  int64_t length = lk->l_len;
  if (length < 0) {  // POSIX: the range [start + len, start)
    if (length == std::numeric_limits<int64_t>::min()) return -EINVAL;
    if (__builtin_add_overflow(start, length, &start)) return -EINVAL;
    length = -length;
  }
  if (start < 0) return -EINVAL;
  Client* c = f->client;
  // Locks publish and fetch data (ROMIO's pattern): this process's unsent writes go out before
  // a lock or an unlock (a failure stays with its file, reported by its next call, fsync or
  // close), and read-ahead windows read before it are dropped.
  if (cmd != F_GETLK) c->FlushIfBuffered();
  proto::LockRequest req{
      f->dev, f->ino, cmd, lk->l_type, start, length, static_cast<int32_t>(syscall(SYS_getpid))};
  proto::LockReply rep;
  int owner = c->LockServer(f->dev, f->ino);
  if (owner != f->server.load()) {
    if (int rc = c->EnsureLockAnchor(f, owner); rc < 0) return rc;
  }
  iorelay::client::Outcome r = c->CallMsg(owner, proto::Op::kLock, req, &rep);
  if (!r.ok()) return r.NegErrno();
  if (cmd == F_GETLK) {
    lk->l_type = rep.type;
    if (rep.type != F_UNLCK) {
      lk->l_whence = SEEK_SET;
      lk->l_start = rep.start;
      lk->l_len = rep.length;
      lk->l_pid = rep.pid;
    }
  } else if (lk->l_type != F_UNLCK) {
    c->NoteLocked(f->dev, f->ino);
  }
  if (cmd != F_GETLK) c->DropWindows();
  return 0;
}

}  // extern "C"
