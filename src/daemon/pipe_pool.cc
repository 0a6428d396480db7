#include "daemon/pipe_pool.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>

namespace iorelay::daemon {

Result<Pipe> Pipe::Make(size_t min_bytes) {
  int fds[2];
  if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return Status::LastError("pipe2");
  Pipe p;
  p.read_fd_ = fds[0];
  p.write_fd_ = fds[1];
  int got = ::fcntl(p.write_fd_, F_GETPIPE_SZ);
  if (got >= 0 && static_cast<size_t>(got) < min_bytes) {
    got = ::fcntl(p.write_fd_, F_SETPIPE_SZ, static_cast<int>(min_bytes));
  }
  if (got < 0) return Status::LastError("fcntl(F_SETPIPE_SZ)");
  p.bytes_ = static_cast<size_t>(got);
  return p;
}

Pipe& Pipe::operator=(Pipe&& o) noexcept {
  if (this != &o) {
    Close();
    read_fd_ = std::exchange(o.read_fd_, -1);
    write_fd_ = std::exchange(o.write_fd_, -1);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

size_t Pipe::Held() const {
  int n = 0;
  const int fd = read_fd_ >= 0 ? read_fd_ : write_fd_;
  if (fd < 0 || ::ioctl(fd, FIONREAD, &n) != 0) return 0;
  return static_cast<size_t>(n);
}

int Pipe::TakeReadEnd() { return std::exchange(read_fd_, -1); }
int Pipe::TakeWriteEnd() { return std::exchange(write_fd_, -1); }

void Pipe::Close() {
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0) ::close(write_fd_);
  read_fd_ = write_fd_ = -1;
}

PipePool::PipePool(size_t preferred, size_t fallback)
    : pipe_bytes_(Pipe::Make(preferred).ok() ? preferred : fallback) {}

PooledPipe& PooledPipe::operator=(PooledPipe&& o) noexcept {
  if (this != &o) {
    Reset();
    pool_ = std::exchange(o.pool_, nullptr);
    holder_ = std::exchange(o.holder_, nullptr);
    pipe_ = std::move(o.pipe_);
  }
  return *this;
}

void PooledPipe::Reset() {
  if (pool_ != nullptr) std::exchange(pool_, nullptr)->Put(holder_, std::move(pipe_));
}

Result<PooledPipe> PipePool::Get(std::atomic<uint32_t>* holder) {
  {
    MutexLock lock(mu_);
    if (out_ >= kMaxOut) return Status::FromErrno(EAGAIN, "every pipe of the pool is lent");
    if (holder->load() >= kMaxPerHolder) {
      return Status::FromErrno(EAGAIN, "the connection holds its share of the pool's pipes");
    }
    ++out_;
    holder->fetch_add(1);
    if (!idle_.empty()) {
      Pipe p = std::move(idle_.back());
      idle_.pop_back();
      return PooledPipe(this, holder, std::move(p));
    }
  }
  Result<Pipe> made = Pipe::Make(pipe_bytes_);
  if (!made.ok()) {
    Put(holder, Pipe());
    return made.status();
  }
  return PooledPipe(this, holder, std::move(*made));
}

size_t PipePool::idle() {
  MutexLock lock(mu_);
  return idle_.size();
}

namespace {

// Both ends open and no byte in it (the holder is done with it: no one else can fill it now).
bool EmptyAndWhole(const Pipe& p) {
  int n = -1;
  return p.read_fd() >= 0 && p.write_fd() >= 0 && ::ioctl(p.read_fd(), FIONREAD, &n) == 0 && n == 0;
}

}  // namespace

void PipePool::Put(std::atomic<uint32_t>* holder, Pipe p) {
  const bool reusable = EmptyAndWhole(p);
  MutexLock lock(mu_);
  --out_;
  holder->fetch_sub(1);
  if (reusable && idle_.size() < kMaxIdle) idle_.push_back(std::move(p));
  // else p closes here
}

Result<size_t> SpliceBetweenPipes(int from, int to, size_t n) {
  size_t moved = 0;
  while (moved < n) {
    ssize_t r = ::splice(from, nullptr, to, nullptr, n - moved, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0 || (r < 0 && errno == EAGAIN)) break;  // `from` empty or `to` full
    if (r < 0) {
      if (moved > 0) break;
      return Status::LastError("splice between pipes");
    }
    moved += static_cast<size_t>(r);
  }
  return moved;
}

Result<PooledPipe> MovePiped(PipePool& pool, std::atomic<uint32_t>* holder, int from, size_t n) {
  Result<PooledPipe> p = pool.Get(holder);
  if (!p.ok()) return p.status();
  Result<size_t> moved = SpliceBetweenPipes(from, p->pipe().write_fd(), n);
  if (!moved.ok()) return moved.status();  // nothing moved: the caller may copy instead
  if (*moved < n) {
    return Status::FromErrno(EPROTO, "the client's pipe held " + std::to_string(*moved) +
                                         " of the " + std::to_string(n) +
                                         " bytes its request announced");
  }
  return p;
}

Status ReadFromPipe(int from, void* buf, size_t n) {
  char discard[4096];
  size_t got = 0;
  while (got < n) {
    ssize_t r = buf != nullptr ? ::read(from, static_cast<char*>(buf) + got, n - got)
                               : ::read(from, discard, std::min(sizeof discard, n - got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      return Status::FromErrno(EPROTO, "a pipe held " + std::to_string(got) + " of the " +
                                           std::to_string(n) + " bytes expected");
    }
    got += static_cast<size_t>(r);
  }
  return Status::Ok();
}

}  // namespace iorelay::daemon
