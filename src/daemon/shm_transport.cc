// ShmConnection: creating and sealing the rings, handing them to the client over its socket,
// and the Connection calls over the rings. Everything the client can write (positions, flags,
// bytes) is validated or copied out before use; see common/shm_ring.h.
#include "daemon/shm_transport.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <new>

#include "common/monotonic.h"

namespace iorelay::daemon {

struct ShmConnection::Mapping {
  // With `lends`: [header][requests' ring][the requests' ring again] at `front`, and [replies'
  // ring][the replies' ring again] at `replies`. Else the file as it is at `front`.
  void* front = nullptr;
  size_t front_bytes = 0;
  void* replies = nullptr;  // (null when inside `front`)
  size_t replies_bytes = 0;
  bool lends = false;
  ShmRingReader in;  // client → daemon (the event loop's thread; Return from any)

  ShmHeader* header() const { return static_cast<ShmHeader*>(front); }
  // The client's doorbells (shm_ring.h): replies written, or room made for requests.
  void WakeReader() const { WakeFlag(&header()->to_client.reader_waiting); }
  void WakeWriter() const { WakeFlag(&header()->to_daemon.writer_waiting); }
  void WakeClient() const {
    WakeReader();
    WakeWriter();
  }
  // A client asleep on the rings learns of the end at once.
  void TellClientItEnds() const {
    header()->daemon_closing.store(1);
    WakeClient();
  }

  ~Mapping() {
    if (front != nullptr) {
      TellClientItEnds();
      ::munmap(front, front_bytes);
    }
    if (replies != nullptr) ::munmap(replies, replies_bytes);
  }
};

// Request bytes lent to a write: given back to the client's ring when the write is done.
class ShmConnection::Lease final : public BufferLease {
 public:
  Lease(std::shared_ptr<Mapping> map, uint64_t position)
      : map_(std::move(map)), position_(position) {}
  ~Lease() override {
    if (map_->in.Return(position_)) map_->WakeWriter();
  }

 private:
  std::shared_ptr<Mapping> map_;
  uint64_t position_;
};

namespace {

// Maps `bytes` of the file at `offset` (prefixed by `prefix` bytes from `offset - prefix`)
// followed by the same `bytes` again, so that any run of them is contiguous across their end.
void* MapTwice(int memfd, size_t offset, size_t prefix, size_t bytes) {
  const size_t total = prefix + 2 * bytes;
  void* base = ::mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  auto* b = static_cast<uint8_t*>(base);
  const int prot = PROT_READ | PROT_WRITE;
  if (::mmap(b, prefix + bytes, prot, MAP_SHARED | MAP_FIXED, memfd,
             static_cast<off_t>(offset - prefix)) == MAP_FAILED ||
      ::mmap(b + prefix + bytes, bytes, prot, MAP_SHARED | MAP_FIXED, memfd,
             static_cast<off_t>(offset)) == MAP_FAILED) {
    ::munmap(base, total);
    return nullptr;
  }
  return base;
}

// Connections mapped twice: each costs four mappings instead of one, and the kernel's limit
// (vm.max_map_count, 65,530 by default) is the whole daemon's; beyond this many, rings are
// mapped once and their data copied.
constexpr uint64_t kMaxMirroredConnections = 4096;

// Maps each ring twice in a row (the requests' one behind the header), so that request bytes
// can be lent and replies written in place. False when the kernel refuses (a page size above
// the header's 4 KiB); the caller then maps the file as it is.
bool MapMirrored(int memfd, uint64_t ring_bytes, void** front, void** replies) {
  *front = MapTwice(memfd, kShmHeaderBytes, kShmHeaderBytes, ring_bytes);
  if (*front == nullptr) return false;
  *replies = MapTwice(memfd, kShmHeaderBytes + ring_bytes, 0, ring_bytes);
  if (*replies != nullptr) return true;
  ::munmap(*front, kShmHeaderBytes + 2 * ring_bytes);
  return false;
}

}  // namespace

Result<std::unique_ptr<ShmConnection>> ShmConnection::Create(uint64_t ring_bytes, bool in_place,
                                                             size_t pipe_bytes,
                                                             std::atomic<uint64_t>* open_count) {
  if (ring_bytes < kShmMinRingBytes || ring_bytes > kShmMaxRingBytes ||
      (ring_bytes & (ring_bytes - 1)) != 0) {
    return Status::InvalidArgument(
        "shared-memory ring size must be a power of two in [64KiB, "
        "64MiB]");
  }
  std::unique_ptr<ShmConnection> c(new ShmConnection());
  c->ring_bytes_ = ring_bytes;
  auto map = std::make_shared<Mapping>();
  c->map_ = map;
  const size_t file_bytes = ShmMappingBytes(ring_bytes);
  c->memfd_ = ::memfd_create("iorelay-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (c->memfd_ < 0) return Status::LastError("memfd_create");
  if (::ftruncate(c->memfd_, static_cast<off_t>(file_bytes)) != 0) {
    return Status::LastError("ftruncate of the shared-memory rings");
  }
  // Sealed: the client gets a writable descriptor, and a shrunk file would fault the daemon.
  if (::fcntl(c->memfd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    return Status::LastError("sealing the shared-memory rings");
  }
  uint8_t* replies_data;
  const bool mirror =
      in_place && (open_count == nullptr || open_count->load() < kMaxMirroredConnections);
  if (mirror && MapMirrored(c->memfd_, ring_bytes, &map->front, &map->replies)) {
    map->lends = true;
    map->front_bytes = kShmHeaderBytes + 2 * ring_bytes;
    map->replies_bytes = 2 * ring_bytes;
    replies_data = static_cast<uint8_t*>(map->replies);
  } else {
    void* p = ::mmap(nullptr, file_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c->memfd_, 0);
    if (p == MAP_FAILED) return Status::LastError("mmap of the shared-memory rings");
    map->front = p;
    map->front_bytes = file_bytes;
    replies_data = static_cast<uint8_t*>(p) + kShmHeaderBytes + ring_bytes;
  }
  c->daemon_bell_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (c->daemon_bell_ < 0) return Status::LastError("eventfd");
  auto* h = new (map->front) ShmHeader{};
  h->magic = kShmMagic;
  h->ring_bytes = ring_bytes;
  // The daemon starts asleep: the client's first request rings it.
  h->to_daemon.reader_waiting.store(1);
  map->in =
      ShmRingReader(&h->to_daemon, static_cast<uint8_t*>(map->front) + kShmHeaderBytes, ring_bytes);
  if (map->lends) map->in.EnableLending();
  c->out_ = ShmRingWriter(&h->to_client, replies_data, ring_bytes);
  if (pipe_bytes > 0) c->MakePipes(pipe_bytes);
  c->open_count_ = open_count;
  if (open_count != nullptr) open_count->fetch_add(1);
  return c;
}

// The connection's pipes hold several pipelined requests' data where the kernel allows it
// (a daemon without CAP_SYS_RESOURCE is held to /proc/sys/fs/pipe-max-size, 1 MiB by
// default); without them the connection carries every byte in its rings.
void ShmConnection::MakePipes(size_t pipe_bytes) {
  auto make = [&] {
    Result<Pipe> p = Pipe::Make(4 * pipe_bytes);
    return p.ok() ? std::move(p) : Pipe::Make(pipe_bytes);
  };
  Result<Pipe> from = make();
  Result<Pipe> to = make();
  if (!from.ok() || !to.ok()) return;
  from_client_ = std::move(*from);
  to_client_ = std::move(*to);
  pipe_pages_ = static_cast<uint32_t>(pipe_bytes / static_cast<size_t>(::getpagesize()));
}

ShmConnection::~ShmConnection() {
  if (memfd_ >= 0) ::close(memfd_);
  if (daemon_bell_ >= 0) ::close(daemon_bell_);
  if (open_count_ != nullptr) open_count_->fetch_sub(1);
}

Status ShmConnection::HandOver(std::unique_ptr<Connection>& socket, const uint8_t* frame,
                               size_t len) {
  const int fds[4] = {memfd_, daemon_bell_, from_client_.write_fd(), to_client_.read_fd()};
  const size_t fds_bytes = (pipe_pages_ > 0 ? 4 : 2) * sizeof(int);
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
  struct iovec iov = {const_cast<uint8_t*>(frame), len};
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = CMSG_SPACE(fds_bytes);
  struct cmsghdr* cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(fds_bytes);
  std::memcpy(CMSG_DATA(cm), fds, fds_bytes);
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
  if (pipe_pages_ > 0) {  // the client's ends are the client's alone
    ::close(from_client_.TakeWriteEnd());
    ::close(to_client_.TakeReadEnd());
  }
  socket_ = std::move(socket);
  return Status::Ok();
}

Result<size_t> ShmConnection::Recv(void* buf, size_t n) {
  if (violated_.load()) {
    return Status::FromErrno(EPROTO, "bytes on the socket of a shared-memory connection");
  }
  const int64_t now = poll_ns_ > 0 ? MonotonicNs() : 0;
  // (Not after a reply that had to wake the client: a client that sleeps at once, without a
  // spin, sends its next request only once it has been woken, mostly after the poll's time.)
  const bool poll = poll_ns_ > 0 && skip_polls_ == 0 && now - last_request_ns_ < poll_ns_ &&
                    !client_slept_.load(std::memory_order_relaxed);
  Result<size_t> got = map_->in.Read(buf, n, /*mark_when_short=*/!poll);
  if (!got.ok()) return got.status();
  if (poll_ns_ > 0) {
    if (*got > 0 && polling_) {
      poll_misses_ = 0;  // the request came while the loop looked: the poll paid
    } else if (*got > 0 && rung_) {
      if (skip_polls_ > 0) --skip_polls_;  // a request that rang the doorbell
    } else if (*got == 0 && polling_ && !poll) {
      // The time passed with no request: the next 2^k - 1 requests are not polled after (k the
      // misses in a row), so a client whose requests come seldom costs a loop little.
      poll_misses_ = std::min(poll_misses_ + 1, kMaxPollMisses);
      skip_polls_ = (1u << poll_misses_) - 1;
    }
    rung_ = !poll && *got < n;
  }
  polling_ = poll && *got < n;
  if (*got > 0) last_request_ns_ = now;
  if (*got > 0 && map_->in.WriterNeedsWake()) map_->WakeWriter();
  // (The doorbell is never drained: with edge-triggered epoll every ring is an event, whatever
  // the counter, and draining could drop one rung just before.)
  if (*got == 0) {
    if (hung_up_.load()) return size_t{0};  // end of stream: the ring is drained
    return Status::FromErrno(EAGAIN, "ring empty");
  }
  return got;
}

Capabilities ShmConnection::capabilities() {
  Capabilities c;
  if (map_->lends) c.in_place = this;
  c.side = this;
  if (pipe_pages_ > 0) c.pipes = this;
  return c;
}

Buffer ShmConnection::Borrow(size_t n) {
  if (!map_->lends || violated_.load()) return Buffer();
  Result<std::optional<uint64_t>> at = map_->in.Borrow(n);
  // (A broken ring position is left for Recv to report.)
  if (!at.ok() || !at->has_value()) return Buffer();
  auto* p = const_cast<uint8_t*>(map_->in.At(**at));
  return Buffer(p, n, std::make_unique<Lease>(map_, **at));
}

uint8_t* ShmConnection::Reserve(size_t n) {
  if (!map_->lends || shut_.load() || hung_up_.load()) return nullptr;
  return out_.Reserve(n);
}

void ShmConnection::CommitReserved(size_t m) {
  out_.Commit(m);
  NoteReplyWake(out_.ReaderNeedsWake());
}

void ShmConnection::NoteReplyWake(bool asleep) {
  client_slept_.store(asleep, std::memory_order_relaxed);
  if (asleep) map_->WakeReader();
}

bool ShmConnection::SignalAlive() {
  map_->header()->daemon_alive.fetch_add(1);
  map_->WakeClient();
  return true;
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
  if (total > 0) NoteReplyWake(out_.ReaderNeedsWake());
  return total;
}

void ShmConnection::Shutdown() {
  shut_.store(true);
  if (socket_) socket_->Shutdown();  // the client sees its socket end
  map_->TellClientItEnds();
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
