// ShmChannel: mapping and checking the daemon's rings, and the sleep/wake protocol on the
// client side (sleep on the flag the daemon clears and wakes, looking at the socket between
// slices of the wait, since a daemon that dies wakes nobody).
#include "client/shm_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "client/internal_fds.h"

namespace iorelay::client {

namespace {
// How long a wait sleeps on its flag before looking at the socket: how late the client notices
// a daemon that died (one that closes the connection wakes it at once). Half the daemon's
// default heartbeat period: a thread blocked on a slow request wakes no more often than the
// heartbeats would wake it.
constexpr int kHangUpCheckMs = 100;
}  // namespace

Result<std::unique_ptr<ShmChannel>> ShmChannel::Map(int memfd, int daemon_bell, uint64_t ring_bytes,
                                                    int pipe_out, int pipe_in,
                                                    uint32_t pipe_pages) {
  std::unique_ptr<ShmChannel> c(new ShmChannel());
  c->daemon_bell_ = daemon_bell;
  c->pipe_out_ = pipe_out;
  c->pipe_in_ = pipe_in;
  if (pipe_pages > 0 && pipe_out >= 0 && pipe_in >= 0 &&
      ::syscall(SYS_fcntl, pipe_out, F_SETFL, O_NONBLOCK) == 0 &&
      ::syscall(SYS_fcntl, pipe_in, F_SETFL, O_NONBLOCK) == 0) {
    c->pipe_pages_ = pipe_pages;
  }
  auto fail = [&](Status s) {
    CloseInternalFd(memfd);
    return s;
  };
  if (ring_bytes < kShmMinRingBytes || ring_bytes > kShmMaxRingBytes ||
      (ring_bytes & (ring_bytes - 1)) != 0) {
    return fail(Status::IOError("the daemon's ring size is out of range"));
  }
  c->map_bytes_ = ShmMappingBytes(ring_bytes);
  struct stat st;
  if (::syscall(SYS_fstat, memfd, &st) != 0 || static_cast<uint64_t>(st.st_size) != c->map_bytes_) {
    return fail(Status::IOError("the daemon's shared memory has the wrong size"));
  }
  void* p = ::mmap(nullptr, c->map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  CloseInternalFd(memfd);
  if (p == MAP_FAILED) return Status::LastError("mmap of the daemon's rings");
  c->map_ = p;
  auto* h = static_cast<ShmHeader*>(p);
  if (h->magic != kShmMagic || h->ring_bytes != ring_bytes) {
    return Status::IOError("the daemon's shared memory has no rings");
  }
  auto* base = static_cast<uint8_t*>(p) + kShmHeaderBytes;
  c->out_ = ShmRingWriter(&h->to_daemon, base, ring_bytes);
  c->in_ = ShmRingReader(&h->to_client, base + ring_bytes, ring_bytes);
  return c;
}

ShmChannel::~ShmChannel() { Release(); }

void ShmChannel::Release() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
  map_ = nullptr;
  for (int* fd : {&daemon_bell_, &pipe_out_, &pipe_in_}) {
    if (*fd >= 0) CloseInternalFd(*fd);
    *fd = -1;
  }
  pipe_pages_ = 0;
}

void ShmChannel::Abandon() { Release(); }

void ShmChannel::ReplaceFd(int old_fd, int new_fd) {
  for (int* fd : {&daemon_bell_, &pipe_out_, &pipe_in_}) {
    if (*fd == old_fd) *fd = new_fd;
  }
}

ssize_t ShmChannel::PipeOut(const struct iovec* iov, int count) {
  // A pipe whose daemon died has no reader: vmsplice fails with EPIPE and raises SIGPIPE, whose
  // default action would kill the application. A library may not change the process's
  // disposition, so the thread blocks SIGPIPE for the call and takes back the one the call
  // raised (a SIGPIPE already pending is the application's, left as it is).
  sigset_t pipe_set, old_mask, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  sigpending(&pending);
  const bool already_pending = sigismember(&pending, SIGPIPE) == 1;
  if (already_pending) {
    // (sigpending cannot tell the application's SIGPIPE from ours once both are queued: a pipe
    // without a reader is not written to at all.)
    pollfd p{pipe_out_, POLLOUT, 0};
    if (::poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0) {
      pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
      errno = EPIPE;
      return -1;
    }
  }
  const ssize_t n =
      ::vmsplice(pipe_out_, iov, static_cast<unsigned long>(count), SPLICE_F_NONBLOCK);
  const int err = errno;
  if (n < 0 && err == EPIPE && !already_pending) {
    const struct timespec now { 0, 0 };
    while (sigtimedwait(&pipe_set, nullptr, &now) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = err;
  return n;
}

ssize_t ShmChannel::PipeIn(const struct iovec* iov, int count) {
  return ::syscall(SYS_readv, pipe_in_, iov, count);  // (never the interposed readv)
}

ssize_t ShmChannel::RecvV(struct iovec* iov, int count) {
  Result<size_t> got = in_.ReadV(iov, count, /*mark_when_short=*/false);
  if (!got.ok()) {
    errno = got.status().code();
    return -1;
  }
  if (*got == 0) {
    errno = EAGAIN;
    return -1;
  }
  if (in_.WriterNeedsWake()) RingDoorbell(daemon_bell_);
  return static_cast<ssize_t>(*got);
}

ssize_t ShmChannel::Send(const struct iovec* iov, int count) {
  for (;;) {
    Result<size_t> took = out_.Write(iov, count);
    if (!took.ok()) {
      errno = took.status().code();
      return -1;
    }
    if (*took > 0) {
      if (out_.ReaderNeedsWake()) RingDoorbell(daemon_bell_);
      return static_cast<ssize_t>(*took);
    }
    Result<bool> full = out_.PrepareToWait();
    if (!full.ok()) {
      errno = full.status().code();
      return -1;
    }
    if (*full) {
      errno = EAGAIN;
      return -1;
    }
  }
}

bool ShmChannel::DaemonSignalledAlive() {
  const uint64_t now = static_cast<ShmHeader*>(map_)->daemon_alive.load();
  if (now == alive_seen_) return false;
  alive_seen_ = now;
  return true;
}

int ShmChannel::Wait(bool for_read, int socket, int timeout_ms) {
  Result<bool> sleep = for_read ? in_.PrepareToSleep() : out_.PrepareToWait();
  if (!sleep.ok()) {
    errno = sleep.status().code();
    return -1;
  }
  if (!*sleep) return 1;  // arrived meanwhile
  auto* h = static_cast<ShmHeader*>(map_);
  std::atomic<uint32_t>* flag =
      for_read ? &h->to_client.reader_waiting : &h->to_daemon.writer_waiting;
  if (h->daemon_closing.load() == 0) SleepOnFlag(flag, std::min(timeout_ms, kHangUpCheckMs));
  if (flag->load() != 1) return 1;  // rung (what arrived is read before an end is reported)
  if (h->daemon_closing.load() != 0) {
    errno = ECONNRESET;
    return -1;
  }
  // After the switch the daemon never writes on the socket: any event there is its end.
  struct pollfd p = {socket, POLLIN | POLLRDHUP, 0};
  int r = ::poll(&p, 1, 0);
  if (r < 0) return errno == EINTR ? 0 : -1;
  if (r > 0) {
    errno = ECONNRESET;
    return -1;
  }
  return 0;  // a slice over, or woken to look at daemon_alive: the caller waits again
}

}  // namespace iorelay::client
