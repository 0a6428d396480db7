// Framing over a non-blocking socket with sendmsg/recvmsg/poll only (never the interposed
// read/write/close): bulk data goes straight between the socket and the caller's buffers.
#include "client/connection.h"

#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "client/env_table.h"
#include "client/internal_fds.h"
#include "common/handshake_transcript.h"
#include "common/key_id.h"
#include "iorelay/version.h"
#include "proto/wire.h"

namespace iorelay::client {
namespace {

// Connects and handshakes made for one Open when the daemon closes the handshake.
constexpr int kHandshakeAttempts = 4;

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

// Skips `n` bytes of an iovec array (modifying the first remaining element in place).
void Advance(struct iovec*& iov, int& count, size_t n) {
  while (count > 0 && n >= iov->iov_len) {
    n -= iov->iov_len;
    ++iov;
    --count;
  }
  if (count > 0 && n > 0) {
    iov->iov_base = static_cast<uint8_t*>(iov->iov_base) + n;
    iov->iov_len -= n;
  }
}

// Appends to `out` the iovecs of the bytes of `span` from `skip` on, at most `bytes` of them.
void SliceIov(IoSpan span, size_t skip, size_t bytes, std::vector<struct iovec>* out) {
  for (int i = 0; i < span.count && bytes > 0; ++i) {
    size_t len = span.iov[i].iov_len;
    if (skip >= len) {
      skip -= len;
      continue;
    }
    len = std::min(len - skip, bytes);
    out->push_back({static_cast<uint8_t*>(span.iov[i].iov_base) + skip, len});
    bytes -= len;
    skip = 0;
  }
}

// IORELAY_SHM=off (or 0, no) keeps connections on their sockets.
bool ShmWanted() {
  const char* v = ReadEnv(EnvVarId::kShm);
  if (v == nullptr) return true;
  return std::strcmp(v, "off") != 0 && std::strcmp(v, "0") != 0 && std::strcmp(v, "no") != 0;
}

}  // namespace

size_t IoSpan::Bytes() const {
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  return total;
}

Result<std::unique_ptr<Connection>> Connection::Open(const Address& addr, const Secret& secret,
                                                     const Identity& who, uint64_t join_session,
                                                     uint64_t join_token, int timeout_ms,
                                                     int spin_us, bool seal) {
  std::unique_ptr<Connection> c;
  Status s;
  // A daemon at --max-handshakes closes the oldest handshakes to let others in (a flood of
  // peers that never authenticate, or a slow handshake among many): one that closed this
  // connection inside its handshake is tried again, a few times, after a growing pause.
  for (int attempt = 0;; ++attempt) {
    Result<int> fd = ConnectSocket(addr, timeout_ms);
    if (!fd.ok()) return fd.status();
    c.reset(new Connection(*fd, timeout_ms));
    c->over_network_ = addr.kind != Address::Kind::kUnix;
    s = c->Handshake(secret, who, join_session, join_token, seal);
    if (s.ok() || !c->peer_gone() || attempt == kHandshakeAttempts - 1) break;
    struct timespec pause = {0, (10'000'000L << (2 * attempt))};  // 10, 40, 160 ms
    ::nanosleep(&pause, nullptr);
  }
  if (s.ok() && addr.kind == Address::Kind::kUnix && !c->send_seal_ && ShmWanted()) {
    s = c->AttachShm();
  }
  // (Not over TCP: a network's round trip mostly outlasts the spin.)
  if (addr.kind == Address::Kind::kUnix) c->spin_.set_us(spin_us);
  if (!s.ok()) {
    if (s.code() == EIO) return Status::IOError("daemon at " + addr.text + ": " + s.message());
    return Status::FromErrno(s.code(),
                             "daemon at " + addr.text + " refused the connection: " + s.message());
  }
  return c;
}

Connection::~Connection() {
  shm_.reset();
  CloseInternalFd(fd_);
}

void Connection::ReplaceFd(int old_fd, int new_fd) {
  if (fd_ == old_fd) fd_ = new_fd;
  if (shm_) shm_->ReplaceFd(old_fd, new_fd);
}

void Connection::Abandon() {
  if (shm_) shm_->Abandon();
  CloseInternalFd(fd_);
  fd_ = -1;
  broken_ = true;
}

// The hello and auth exchanges go into the transcript (common/handshake_transcript.h); the
// daemon's proof must cover the transcript this side saw, so a changed byte — `sealed` turned
// off, say — ends the connection here, before any request. kFinished then confirms the whole
// transcript to the daemon, which serves nothing before it.
Status Connection::Handshake(const Secret& secret, const Identity& who, uint64_t join_session,
                             uint64_t join_token, bool seal) {
  ClientTranscript transcript(proto::kVersion);
  // The frames as this side sent and received them (RoundTrip numbers requests from next_id_).
  const auto hello_op = static_cast<uint16_t>(proto::Op::kHello);
  const uint64_t hello_id = next_id_;
  std::vector<uint8_t> payload;
  Result<ReplyInfo> r = RoundTrip(proto::Op::kHello, {}, {}, &payload, {});
  if (!r.ok()) return r.status();
  if (r->version != proto::kVersion) {
    broken_ = true;
    return Status::FromErrno(EPROTONOSUPPORT,
                             "iorelayd speaks protocol " + std::to_string(r->version) +
                                 ", this client (iorelay " + IORELAY_VERSION + ") speaks " +
                                 std::to_string(proto::kVersion) +
                                 ": install the same iorelay version on clients and I/O nodes");
  }
  if (r->status != 0) return Status::FromErrno(r->status, "hello");
  proto::HelloReply hello;
  if (!proto::DecodeFields(payload, &hello).ok()) return Fail(Status::IOError("bad hello"), false);
  transcript.AddHello(
      proto::HeaderBytes({hello_op, hello_id, 0, 0}), {},
      proto::HeaderBytes(proto::ReplyHeader(hello_op, hello_id, payload.size(), 0, r->version)),
      payload);
  proto::AuthRequest auth;
  auth.client_nonce = RandomNonce();
  auth.proof = ComputeProof(secret, hello.server_nonce, auth.client_nonce);
  auth.key_id = KeyIdOf(secret);
  auth.pid = who.pid;
  auth.node_id = who.node_id;
  auth.host = who.host;
  auth.join_session = join_session;
  auth.join_token = join_token;
  // The tag algorithms this side checks: Poly1305 always, AES-GMAC where the CPU runs it.
  auth.seal_wanted =
      (seal ? proto::kSealWanted : 0) | (AesGmacAvailable() ? proto::kSealOffersAesGmac : 0);
  const std::vector<uint8_t> auth_fields = proto::EncodeFields(auth);
  const auto auth_op = static_cast<uint16_t>(proto::Op::kAuth);
  const uint64_t auth_id = next_id_;
  r = RoundTrip(proto::Op::kAuth, auth_fields, {}, &payload, {});
  if (!r.ok()) return r.status();
  if (r->status != 0) {
    broken_ = true;  // the daemon closes after a refusal
    return Status::FromErrno(r->status, "auth");
  }
  proto::AuthReply reply;
  if (!proto::DecodeFields(payload, &reply).ok())
    return Fail(Status::IOError("bad auth reply"), false);
  // (daemon_proof is the reply's last field: it covers the payload before it.)
  if (!transcript.AddAuth(
          secret,
          proto::HeaderBytes({auth_op, auth_id, static_cast<uint32_t>(auth_fields.size()), 0}),
          auth_fields,
          proto::HeaderBytes(proto::ReplyHeader(auth_op, auth_id, payload.size(), 0, r->version)),
          payload)) {
    // Nothing has been sent beyond the handshake: a squatter learns no data and no secret, and
    // a handshake changed on the way (sealing switched off) is caught here.
    broken_ = true;
    return Status::FromErrno(EACCES,
                             "the daemon did not prove it holds the job credential, or the "
                             "handshake was changed on the way (another process at its address, "
                             "or a man in the middle?)");
  }
  if (seal && over_network_ && reply.sealed == 0) {
    broken_ = true;
    return Status::FromErrno(EACCES,
                             "the daemon did not seal this TCP connection (iorelayd --seal off? "
                             "set IORELAY_SEAL=off only to measure what sealing costs)");
  }
  if (reply.sealed != 0) {
    // (Bound by the transcript: the daemon chose it, and chose from what this side offered.)
    const auto tag = static_cast<TagAlgorithm>(reply.sealed);
    if (tag != TagAlgorithm::kPoly1305 &&
        (tag != TagAlgorithm::kAesGmac || (auth.seal_wanted & proto::kSealOffersAesGmac) == 0)) {
      return Fail(Status::IOError("the daemon chose a frame tag this client did not offer"), false);
    }
    const SessionKey key = transcript.SealingKey(secret);
    send_seal_.emplace(key, FrameDirection::kToDaemon, tag);
    recv_seal_.emplace(key, FrameDirection::kToClient, tag);
  }
  proto::FinishedRequest finished;
  finished.mac = transcript.Finished(secret);
  // No reply: a daemon that saw another transcript closes, and the first request fails.
  IORELAY_RETURN_IF_ERROR(
      Send(proto::Op::kFinished, next_id_++, proto::EncodeFields(finished), {}));
  session_ = {reply.session, reply.token, reply.app, reply.heartbeat_ms, reply.max_io_bytes};
  if (session_.max_io_bytes == 0 || session_.max_io_bytes > proto::kMaxIoBytes) {
    session_.max_io_bytes = proto::kMaxIoBytes;
  }
  return Status::Ok();
}

Result<ReplyInfo> Connection::RoundTrip(proto::Op op, std::span<const uint8_t> fields, IoSpan tx,
                                        std::vector<uint8_t>* payload, IoSpan rx) {
  if (broken_) return Status::IOError("connection is broken");
  Exchange one{op, fields, tx, rx, payload};
  IORELAY_RETURN_IF_ERROR(Pipeline({&one, 1}, 1));
  return one.reply;
}

Status Connection::Pipeline(std::span<Exchange> batch, size_t window) {
  if (broken_) return Status::IOError("connection is broken");
  window = std::max<size_t>(window, 1);
  std::vector<Exchange*> inflight;
  std::vector<uint64_t> ids;
  size_t next = 0;
  while (next < batch.size() || !inflight.empty()) {
    while (next < batch.size() && inflight.size() < window) {
      Exchange& e = batch[next++];
      const uint64_t id = next_id_++;
      deadline_ms_ = NowMs() + timeout_ms_;
      IORELAY_RETURN_IF_ERROR(SendExchange(e, id));
      inflight.push_back(&e);
      ids.push_back(id);
    }
    Result<size_t> done = Receive(inflight, ids);
    if (!done.ok()) return done.status();
    inflight[*done]->answered = true;
    inflight.erase(inflight.begin() + static_cast<ptrdiff_t>(*done));
    ids.erase(ids.begin() + static_cast<ptrdiff_t>(*done));
  }
  return Status::Ok();
}

Result<uint64_t> Connection::Start(Exchange& e) {
  if (broken_) return Status::IOError("connection is broken");
  const uint64_t id = next_id_++;
  deadline_ms_ = NowMs() + timeout_ms_;
  IORELAY_RETURN_IF_ERROR(SendExchange(e, id));
  return id;
}

Result<bool> Connection::ReplyArrived() {
  if (broken_) return true;  // Finish reports the failure at once
  for (;;) {
    if (rend_ - rpos_ < proto::kHeaderBytes) {
      if (rpos_ > 0) {
        std::memmove(rbuf_.data(), rbuf_.data() + rpos_, rend_ - rpos_);
        rend_ -= rpos_;
        rpos_ = 0;
      }
      struct iovec v = {rbuf_.data() + rend_, rbuf_.size() - rend_};
      ssize_t n = RawRecv(&v, 1);
      if (n > 0) {
        rend_ += static_cast<size_t>(n);
        deadline_ms_ = NowMs() + timeout_ms_;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return NowMs() >= deadline_ms_;  // silent past the deadline: Finish reports it
      }
      return true;  // closed or failed: Finish reports it
    }
    Result<proto::FrameHeader> h = proto::DecodeHeader(rbuf_.data() + rpos_);
    const bool heartbeat =
        h.ok() && (h->op & ~proto::kReplyBit) == static_cast<uint16_t>(proto::Op::kHeartbeat);
    // (On a sealed connection a heartbeat's tag must be checked in order: Finish does that.)
    if (!heartbeat || h->length != 0 || recv_seal_) return true;
    rpos_ += proto::kHeaderBytes;  // a heartbeat: the daemon is alive, the reply still to come
  }
}

Status Connection::Finish(Exchange& e, uint64_t id) {
  Exchange* inflight[] = {&e};
  Result<size_t> done = Receive(inflight, {&id, 1});
  if (!done.ok()) return done.status();
  e.answered = true;
  return Status::Ok();
}

Status Connection::Post(proto::Op op, std::span<const uint8_t> fields) {
  if (broken_) return Status::IOError("connection is broken");
  uint64_t id = next_id_++;
  deadline_ms_ = NowMs() + timeout_ms_;
  IORELAY_RETURN_IF_ERROR(Send(op, id, fields, {}));
  unawaited_.push_back(id);
  return Status::Ok();
}

void Connection::PadBeforeData(uint64_t position, size_t before_data, std::vector<uint8_t>* pad) {
  pad->clear();
  // The smallest kPad frame is its header and an empty string's length.
  constexpr size_t kMinPad = proto::kHeaderBytes + sizeof(uint32_t);
  const uint64_t bytes = ShmPadBytes(position, before_data, kMinPad, kShmDataAlign);
  if (bytes == 0) return;
  proto::PadRequest msg;
  msg.bytes.assign(bytes - kMinPad, '\0');
  std::vector<uint8_t> fields = proto::EncodeFields(msg);
  pad->resize(proto::kHeaderBytes);
  proto::FrameHeader h{static_cast<uint16_t>(proto::Op::kPad), 0,
                       static_cast<uint32_t>(fields.size()), 0};
  proto::EncodeHeader(h, pad->data());
  pad->insert(pad->end(), fields.begin(), fields.end());
}

namespace {
// The longest prefix of `span` whose memory spans at most `pages` pages (the pipe buffers
// vmsplice makes of it), cut to a multiple of 4 KiB unless it is all of it: the rest follows in
// the ring, at a file offset O_DIRECT accepts.
size_t PipedPrefix(IoSpan span, size_t pages) {
  const uintptr_t page = static_cast<uintptr_t>(::getpagesize());
  size_t bytes = 0;
  for (int i = 0; i < span.count; ++i) {
    const size_t len = span.iov[i].iov_len;
    if (len == 0) continue;
    const auto start = reinterpret_cast<uintptr_t>(span.iov[i].iov_base);
    const size_t need = (start + len - 1) / page - start / page + 1;
    if (need <= pages) {
      pages -= need;
      bytes += len;
      continue;
    }
    if (pages > 0) bytes += (start / page + pages) * page - start;  // to its last page's end
    return bytes & ~size_t{4095};
  }
  return bytes;
}

}  // namespace

size_t Connection::PipedBytes(const Exchange& e) const {
  if (!shm_ || shm_->pipe_pages() == 0 || send_seal_) return 0;
  if (e.op == proto::Op::kPwrite) {
    const size_t n = PipedPrefix(e.tx, shm_->pipe_pages());
    return n >= kPipeMinBytes ? n : 0;
  }
  const size_t n = e.rx.Bytes();
  return e.op == proto::Op::kPread && n >= kPipeMinBytes ? n : 0;
}

Status Connection::SendExchange(Exchange& e, uint64_t id) {
  const size_t piped = PipedBytes(e);
  e.piped = piped > 0;
  if (!e.piped) return Send(e.op, id, e.fields, e.tx);
  if (e.op == proto::Op::kPread) return Send(proto::Op::kPreadPiped, id, e.fields, {});
  // The piped bytes first: the daemon takes them out of the pipe when it reads the frame,
  // which carries what did not fit as its tail.
  std::vector<struct iovec> head, rest;
  SliceIov(e.tx, 0, piped, &head);
  SliceIov(e.tx, piped, SIZE_MAX, &rest);
  IORELAY_RETURN_IF_ERROR(PipeOut({head.data(), static_cast<int>(head.size())}));
  // PwritePipedRequest: kPwrite's fields and the piped length.
  std::vector<uint8_t> fields(e.fields.begin(), e.fields.end());
  proto::Writer w(&fields);
  w(static_cast<uint32_t>(piped));
  Status sent =
      Send(proto::Op::kPwritePiped, id, fields, {rest.data(), static_cast<int>(rest.size())});
  // Bytes in the pipe without their frame would be taken as the next piped write's.
  if (!sent.ok() && !broken_) return Fail(sent, false);
  return sent;
}

Status Connection::PipeOut(IoSpan tx) {
  std::vector<struct iovec> iovs;
  SliceIov(tx, 0, tx.Bytes(), &iovs);
  struct iovec* iov = iovs.data();
  int count = static_cast<int>(iovs.size());
  while (count > 0) {
    ssize_t n = shm_->PipeOut(iov, std::min(count, IOV_MAX));
    if (n > 0) {
      Advance(iov, count, static_cast<size_t>(n));
      deadline_ms_ = NowMs() + timeout_ms_;  // the daemon took earlier bytes: progress
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || errno != EAGAIN) {
      // Only EPIPE says the daemon is gone (EFAULT, ENOMEM: this call's trouble); either way
      // part of the data may be in the pipe, so the connection cannot go on.
      const bool gone = n < 0 && errno == EPIPE;
      return Fail(Status::LastError("vmsplice to daemon"), gone);
    }
    // Full: the daemon empties it as it reads the frames of the bytes before these, which a
    // slow backend call may hold up; its heartbeats say it lives.
    if (shm_->DaemonSignalledAlive()) deadline_ms_ = NowMs() + timeout_ms_;
    const int64_t left = deadline_ms_ - NowMs();
    if (left <= 0) return Fail(Status::IOError("the daemon's pipe stayed full"), false);
    pollfd p[2] = {{shm_->pipe_out_fd(), POLLOUT, 0}, {fd_, POLLRDHUP, 0}};
    int r = ::poll(p, 2, static_cast<int>(std::min<int64_t>(left, 100)));
    if (r < 0 && errno != EINTR) return Fail(Status::LastError("poll"), false);
    if (r > 0 && p[1].revents != 0)
      return Fail(Status::IOError("the daemon closed the connection"), true);
  }
  return Status::Ok();
}

Status Connection::PipeIn(const struct iovec* iov, int count, size_t bytes) {
  std::vector<struct iovec> iovs(iov, iov + count);
  struct iovec* v = iovs.data();
  while (bytes > 0) {
    ssize_t n = shm_->PipeIn(v, std::min(count, IOV_MAX));
    if (n > 0) {
      bytes -= static_cast<size_t>(n);
      Advance(v, count, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return Fail(Status::IOError("protocol error: the daemon's pipe held less than its reply said"),
                false);
  }
  return Status::Ok();
}

Status Connection::Send(proto::Op op, uint64_t id, std::span<const uint8_t> fields, IoSpan tx) {
  size_t tail = tx.Bytes();
  if (fields.size() + tail > proto::kMaxPayloadBytes) return Status::InvalidArgument("too large");
  sbuf_.resize(proto::kHeaderBytes + fields.size());
  proto::FrameHeader h{static_cast<uint16_t>(op), id, static_cast<uint32_t>(fields.size() + tail),
                       0};
  proto::EncodeHeader(h, sbuf_.data());
  if (!fields.empty())
    std::memcpy(sbuf_.data() + proto::kHeaderBytes, fields.data(), fields.size());
  std::vector<struct iovec> iovs;
  iovs.reserve(3 + tx.count);
  if (shm_ && !send_seal_ && tail >= kShmInPlaceMinBytes) {
    PadBeforeData(shm_->SendPosition(), sbuf_.size(), &pbuf_);
    if (!pbuf_.empty()) iovs.push_back({pbuf_.data(), pbuf_.size()});
  }
  iovs.push_back({sbuf_.data(), sbuf_.size()});
  SliceIov(tx, 0, tail, &iovs);
  FrameTag tag;
  if (send_seal_) {  // the tag covers the frame as sent: header, fields, data
    FrameMac mac = send_seal_->Next();
    for (const struct iovec& v : iovs) {
      mac.Update({static_cast<const uint8_t*>(v.iov_base), v.iov_len});
    }
    tag = mac.Final();
    iovs.push_back({tag.data(), tag.size()});
  }
  struct iovec* iov = iovs.data();
  int count = static_cast<int>(iovs.size());
  while (count > 0) {
    ssize_t n = RawSend(iov, count);
    if (n >= 0) {
      Advance(iov, count, static_cast<size_t>(n));
      deadline_ms_ = NowMs() + timeout_ms_;  // progress is liveness
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      IORELAY_RETURN_IF_ERROR(WaitFor(POLLOUT));
      continue;
    }
    return Fail(Status::LastError("send to daemon"), true);
  }
  return Status::Ok();
}

ssize_t Connection::RawRecv(struct iovec* iov, int count) {
  if (shm_) return shm_->RecvV(iov, std::min(count, IOV_MAX));
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = std::min(count, IOV_MAX);
  return ::recvmsg(fd_, &m, MSG_DONTWAIT);
}

ssize_t Connection::RawSend(struct iovec* iov, int count) {
  if (shm_) return shm_->Send(iov, std::min(count, IOV_MAX));
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = std::min(count, IOV_MAX);
  return ::sendmsg(fd_, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

bool Connection::SpinForReply() {
  // A look at the replies' ring is a load from the shared page; on a socket, a poll.
  if (shm_) return spin_.Spin([this] { return shm_->RepliesWaiting(); });
  return spin_.Spin([this] {
    pollfd q{fd_, POLLIN, 0};
    return ::poll(&q, 1, 0) != 0;
  });
}

Status Connection::WaitFor(short events) {
  if (events == POLLIN && SpinForReply()) return Status::Ok();
  for (;;) {
    // A daemon writing a reply in place signals life in the shared page instead of by frames.
    if (shm_ && shm_->DaemonSignalledAlive()) deadline_ms_ = NowMs() + timeout_ms_;
    int64_t left = deadline_ms_ - NowMs();
    if (left <= 0) {
      return Fail(Status::IOError("no reply nor heartbeat from the daemon within " +
                                  std::to_string(timeout_ms_) + " ms"),
                  false);
    }
    if (shm_) {
      int r = shm_->Wait(events == POLLIN, fd_, static_cast<int>(left));
      if (r > 0) return Status::Ok();
      if (r < 0) return Fail(Status::IOError("the daemon closed the connection"), true);
      continue;
    }
    pollfd p{fd_, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno != EINTR) return Fail(Status::LastError("poll"), false);
    if (r > 0) {
      if (p.revents & POLLNVAL) return Fail(Status::IOError("socket closed under us"), true);
      return Status::Ok();  // readable, writable, or an error the next call reports
    }
  }
}

Status Connection::Fill(size_t min, size_t max) {
  if (rend_ - rpos_ >= min) return Status::Ok();
  if (rpos_ > 0) {
    std::memmove(rbuf_.data(), rbuf_.data() + rpos_, rend_ - rpos_);
    rend_ -= rpos_;
    rpos_ = 0;
  }
  max = std::min(max, rbuf_.size());
  while (rend_ < min) {
    struct iovec v = {rbuf_.data() + rend_, max - rend_};
    ssize_t n = RawRecv(&v, 1);
    if (n > 0) rend_ += static_cast<size_t>(n);
    IORELAY_RETURN_IF_ERROR(AfterReceive(n));
  }
  return Status::Ok();
}

Status Connection::AfterReceive(ssize_t n) {
  if (n > 0) {
    deadline_ms_ = NowMs() + timeout_ms_;  // any byte from the daemon renews its liveness
    return Status::Ok();
  }
  if (n == 0) return Fail(Status::IOError("the daemon closed the connection"), true);
  if (errno == EINTR) return Status::Ok();
  if (errno != EAGAIN && errno != EWOULDBLOCK) {
    return Fail(Status::LastError("receive from daemon"), true);
  }
  return WaitFor(POLLIN);
}

Status Connection::ReceiveInto(struct iovec* iov, int count, size_t bytes) {
  // Bytes already buffered first (at most sizeof rbuf_), then straight into the iovecs.
  while (bytes > 0 && rpos_ < rend_ && count > 0) {
    size_t n = std::min({iov->iov_len, rend_ - rpos_, bytes});
    std::memcpy(iov->iov_base, rbuf_.data() + rpos_, n);
    rpos_ += n;
    bytes -= n;
    Advance(iov, count, n);
  }
  while (bytes > 0) {
    ssize_t n = RawRecv(iov, count);
    if (n > 0) {
      bytes -= static_cast<size_t>(n);
      Advance(iov, count, static_cast<size_t>(n));
    }
    IORELAY_RETURN_IF_ERROR(AfterReceive(n));
  }
  return Status::Ok();
}

Result<size_t> Connection::Receive(std::span<Exchange* const> inflight,
                                   std::span<const uint64_t> ids) {
  const bool bulk = std::any_of(inflight.begin(), inflight.end(),
                                [](const Exchange* e) { return e->rx.iov != nullptr; });
  for (;;) {
    if (rpos_ == rend_) IORELAY_RETURN_IF_ERROR(WaitFor(POLLIN));  // the reply is not there yet
    // With bulk data expected, take only the header so the data lands in the caller's buffers.
    IORELAY_RETURN_IF_ERROR(Fill(proto::kHeaderBytes, bulk ? proto::kHeaderBytes : rbuf_.size()));
    Result<proto::FrameHeader> h = proto::DecodeHeader(rbuf_.data() + rpos_);
    if (!h.ok()) return Fail(Status::IOError("protocol error: " + h.status().message()), false);
    std::optional<FrameMac> mac;
    if (recv_seal_) {
      mac.emplace(recv_seal_->Next());
      mac->Update({rbuf_.data() + rpos_, proto::kHeaderBytes});
    }
    rpos_ += proto::kHeaderBytes;
    std::vector<struct iovec> iovs;
    std::vector<uint8_t> scratch;
    bool skip = (h->op & ~proto::kReplyBit) == static_cast<uint16_t>(proto::Op::kHeartbeat);
    if (auto posted = std::find(unawaited_.begin(), unawaited_.end(), h->id);
        !skip && posted != unawaited_.end()) {
      unawaited_.erase(posted);  // the reply to a posted request: dropped like a heartbeat
      skip = true;
    }
    size_t which = std::find(ids.begin(), ids.end(), h->id) - ids.begin();
    if (!skip && (which == ids.size() ||
                  h->op != (static_cast<uint16_t>(WireOp(*inflight[which])) | proto::kReplyBit))) {
      return Fail(Status::IOError("protocol error: unexpected reply"), false);
    }
    Exchange* e = skip ? nullptr : inflight[which];
    if (e && e->piped && e->op == proto::Op::kPread && h->status == 0) {
      Result<size_t> got = ReceivePiped(*e, h->length);
      if (!got.ok()) return got.status();
      e->reply = ReplyInfo{0, *got, h->version};
      return which;
    }
    if (e && e->rx.iov && h->status == 0) {
      if (h->length > e->rx.Bytes())
        return Fail(Status::IOError("protocol error: reply too long"), false);
      SliceIov(e->rx, 0, h->length, &iovs);
    } else {
      std::vector<uint8_t>* dst = (e && e->payload) ? e->payload : &scratch;
      dst->resize(h->length);
      if (h->length > 0) iovs.push_back({dst->data(), dst->size()});
    }
    // (ReceiveInto moves the iovecs along; the MAC needs them as they were.)
    std::vector<struct iovec> received;
    if (mac) received = iovs;
    IORELAY_RETURN_IF_ERROR(ReceiveInto(iovs.data(), static_cast<int>(iovs.size()), h->length));
    if (mac) {
      for (const struct iovec& v : received) {
        mac->Update({static_cast<const uint8_t*>(v.iov_base), v.iov_len});
      }
      FrameTag tag;
      struct iovec t = {tag.data(), tag.size()};
      IORELAY_RETURN_IF_ERROR(ReceiveInto(&t, 1, tag.size()));
      if (!TagsEqual(tag, mac->Final())) {
        return Fail(Status::IOError("a frame from the daemon failed its integrity check"), false);
      }
    }
    if (skip) continue;
    e->reply = ReplyInfo{h->status, h->length, h->version};
    return which;
  }
}

Result<size_t> Connection::ReceivePiped(Exchange& e, size_t length) {
  proto::PipedReadReply fields;
  const size_t fields_bytes = sizeof fields.piped;
  if (length < fields_bytes)
    return Fail(Status::IOError("protocol error: short piped reply"), false);
  IORELAY_RETURN_IF_ERROR(Fill(fields_bytes, fields_bytes));
  std::memcpy(&fields.piped, rbuf_.data() + rpos_, fields_bytes);
  rpos_ += fields_bytes;
  const size_t tail = length - fields_bytes;
  if (fields.piped > e.rx.Bytes() || tail > e.rx.Bytes() - fields.piped) {
    return Fail(Status::IOError("protocol error: reply too long"), false);
  }
  // Exactly `piped` bytes from the pipe: the daemon may already have put the data of the next
  // piped reply behind them.
  std::vector<struct iovec> piped, rest;
  SliceIov(e.rx, 0, fields.piped, &piped);
  SliceIov(e.rx, fields.piped, tail, &rest);
  IORELAY_RETURN_IF_ERROR(PipeIn(piped.data(), static_cast<int>(piped.size()), fields.piped));
  IORELAY_RETURN_IF_ERROR(ReceiveInto(rest.data(), static_cast<int>(rest.size()), tail));
  return fields.piped + tail;
}

proto::Op Connection::WireOp(const Exchange& e) {
  if (!e.piped) return e.op;
  return e.op == proto::Op::kPread ? proto::Op::kPreadPiped : proto::Op::kPwritePiped;
}

Status Connection::Fail(Status s, bool peer_gone) {
  broken_ = true;
  peer_gone_ = peer_gone;
  return Status::IOError(s.message());
}

}  // namespace iorelay::client
