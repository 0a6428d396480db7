// ShmConnection: creating and sealing the rings, handing them to the client over its socket,
// and the Connection calls over the rings. Everything the client can write (positions, flags,
// bytes) is validated or copied out before use; see common/shm_ring.h.
#include "daemon/shm_transport.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <new>

namespace iorelay::daemon {

Result<std::unique_ptr<ShmConnection>> ShmConnection::Create(uint64_t ring_bytes,
                                                             std::atomic<uint64_t>* open_count) {
  if (ring_bytes < kShmMinRingBytes || ring_bytes > kShmMaxRingBytes ||
      (ring_bytes & (ring_bytes - 1)) != 0) {
    return Status::InvalidArgument(
        "shared-memory ring size must be a power of two in [64KiB, "
        "64MiB]");
  }
  std::unique_ptr<ShmConnection> c(new ShmConnection());
  c->ring_bytes_ = ring_bytes;
  c->map_bytes_ = ShmMappingBytes(ring_bytes);
  c->memfd_ = ::memfd_create("iorelay-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (c->memfd_ < 0) return Status::LastError("memfd_create");
  if (::ftruncate(c->memfd_, static_cast<off_t>(c->map_bytes_)) != 0) {
    return Status::LastError("ftruncate of the shared-memory rings");
  }
  // Sealed: the client gets a writable descriptor, and a shrunk file would fault the daemon.
  if (::fcntl(c->memfd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    return Status::LastError("sealing the shared-memory rings");
  }
  void* p = ::mmap(nullptr, c->map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, c->memfd_, 0);
  if (p == MAP_FAILED) return Status::LastError("mmap of the shared-memory rings");
  c->map_ = p;
  c->daemon_bell_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  c->client_bell_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (c->daemon_bell_ < 0 || c->client_bell_ < 0) return Status::LastError("eventfd");
  auto* h = new (p) ShmHeader{};
  h->magic = kShmMagic;
  h->ring_bytes = ring_bytes;
  // The daemon starts asleep: the client's first request rings it.
  h->to_daemon.reader_waiting.store(1);
  auto* base = static_cast<uint8_t*>(p) + kShmHeaderBytes;
  c->in_ = ShmRingReader(&h->to_daemon, base, ring_bytes);
  c->out_ = ShmRingWriter(&h->to_client, base + ring_bytes, ring_bytes);
  c->open_count_ = open_count;
  if (open_count != nullptr) open_count->fetch_add(1);
  return c;
}

ShmConnection::~ShmConnection() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
  if (memfd_ >= 0) ::close(memfd_);
  if (daemon_bell_ >= 0) ::close(daemon_bell_);
  if (client_bell_ >= 0) ::close(client_bell_);
  if (open_count_ != nullptr) open_count_->fetch_sub(1);
}

Status ShmConnection::HandOver(std::unique_ptr<Connection>& socket, const uint8_t* frame,
                               size_t len) {
  const int fds[3] = {memfd_, daemon_bell_, client_bell_};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
  struct iovec iov = {const_cast<uint8_t*>(frame), len};
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  struct cmsghdr* cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof fds);
  std::memcpy(CMSG_DATA(cm), fds, sizeof fds);
  ssize_t n;
  do {
    n = ::sendmsg(socket->PollFd(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  // The socket is idle at this point (nothing queued), so a short send means a broken peer.
  if (n < 0) return Status::LastError("sending the shared-memory rings");
  if (static_cast<size_t>(n) != len) {
    return Status::IOError("the socket took only part of the shared-memory attach reply");
  }
  ::close(memfd_);  // the mapping stays; the client has its own descriptor
  memfd_ = -1;
  socket_ = std::move(socket);
  return Status::Ok();
}

Result<size_t> ShmConnection::Recv(void* buf, size_t n) {
  if (violated_.load()) {
    return Status::FromErrno(EPROTO, "bytes on the socket of a shared-memory connection");
  }
  Result<size_t> got = in_.Read(buf, n, /*mark_when_short=*/true);
  if (!got.ok()) return got.status();
  if (*got > 0 && in_.WriterNeedsWake()) RingDoorbell(client_bell_);
  // (The doorbell is never drained: with edge-triggered epoll every ring is an event, whatever
  // the counter, and draining could drop one rung just before.)
  if (*got == 0) {
    if (hung_up_.load()) return size_t{0};  // end of stream: the ring is drained
    return Status::FromErrno(EAGAIN, "ring empty");
  }
  return got;
}

Result<size_t> ShmConnection::SendSome(const struct iovec* iov, int iovcnt) {
  if (shut_.load() || hung_up_.load()) {
    return Status::FromErrno(EPIPE, "shared-memory connection closed");
  }
  std::array<struct iovec, 8> local;
  if (iovcnt > static_cast<int>(local.size())) iovcnt = static_cast<int>(local.size());
  std::copy(iov, iov + iovcnt, local.begin());
  struct iovec* v = local.data();
  int count = iovcnt;
  size_t total = 0;
  for (;;) {
    Result<size_t> took = out_.Write(v, count);
    if (!took.ok()) return took.status();
    total += *took;
    size_t done = *took;
    while (count > 0 && done >= v->iov_len) {
      done -= v->iov_len;
      ++v;
      --count;
    }
    if (count > 0) {
      v->iov_base = static_cast<uint8_t*>(v->iov_base) + done;
      v->iov_len -= done;
    }
    if (count == 0) break;
    // Full: ask the client to ring when it makes room (the loop then flushes the queue).
    Result<bool> wait = out_.PrepareToWait();
    if (!wait.ok()) return wait.status();
    if (*wait) break;
  }
  if (total > 0 && out_.ReaderNeedsWake()) RingDoorbell(client_bell_);
  return total;
}

void ShmConnection::Shutdown() {
  shut_.store(true);
  if (socket_) socket_->Shutdown();  // the client sees its socket end
}

std::string ShmConnection::peer() const {
  return (socket_ ? socket_->peer() : std::string("?")) + " (shared memory)";
}

void ShmConnection::OnAuxEvent() {
  if (!socket_) return;
  uint8_t byte;
  ssize_t n;
  do {
    n = ::recv(socket_->PollFd(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
    hung_up_.store(true);
  } else if (n > 0) {
    violated_.store(true);
  }
}

}  // namespace iorelay::daemon
