// Reply framing and the outgoing queue: a reply goes straight to the socket when nothing is
// queued before it (no hand-off on the fast path); what the socket does not take waits in the
// queue for the connection's event loop. No send here ever blocks.
#include "daemon/client_conn.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

#include "common/monotonic.h"
#include "common/shm_ring.h"
#include "daemon/stats.h"

namespace iorelay::daemon {
namespace {

// Iovecs of one frame as the senders build it: header, fields, tail.
constexpr int kMaxIov = 3;

void EncodeReplyHeader(proto::Op op, uint64_t id, int32_t status, size_t length,
                       uint8_t (&header)[proto::kHeaderBytes]) {
  proto::EncodeHeader(proto::ReplyHeader(static_cast<uint16_t>(op), id, length, status), header);
}

}  // namespace

ClientConn::~ClientConn() {
  for (OutFrame& f : out_) pool_->Put(std::move(f.data));
}

void ClientConn::SendLocked(struct iovec* iov, int n, Buffer* data, size_t data_len) {
  if (closed_.load()) return;
  // The last iovec is the owned tail when `data` is given; the others are copied if queued.
  const int copied = data != nullptr ? n - 1 : n;
  size_t copied_len = 0;
  for (int i = 0; i < copied; ++i) copied_len += iov[i].iov_len;
  OutFrame f;
  struct iovec all[kMaxIov + 1];
  std::copy(iov, iov + n, all);
  int count = n;
  if (seal_) {  // the tag covers the frame as sent: header, fields, data
    FrameMac mac = seal_->Next();
    for (int i = 0; i < n; ++i) {
      mac.Update({static_cast<const uint8_t*>(iov[i].iov_base), iov[i].iov_len});
    }
    f.tag = mac.Final();
    f.tag_len = f.tag.size();
    all[count++] = {f.tag.data(), f.tag_len};
  }
  size_t done = 0;
  if (out_.empty() && in_place_ == nullptr) {
    Result<size_t> r = transport_->SendSome(all, count);
    if (!r.ok()) {
      FailLocked(r.status());
      return;
    }
    done = *r;
    if (done == copied_len + data_len + f.tag_len) return;
  }
  // The rest waits in the queue: what is left of the copied part, the owned tail, the tag.
  size_t skip = std::min(done, copied_len);
  done -= skip;
  for (int i = 0; i < copied; ++i) {
    const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
    const size_t s = std::min(skip, iov[i].iov_len);
    skip -= s;
    f.bytes.insert(f.bytes.end(), p + s, p + iov[i].iov_len);
  }
  if (data != nullptr) {
    f.data_len = data_len;
    f.data_sent = std::min(done, data_len);
    done -= f.data_sent;
    f.data = std::move(*data);
  }
  f.tag_sent = done;
  Enqueue(std::move(f));
}

void ClientConn::Seal(const SessionKey& key, TagAlgorithm tag) {
  MutexLock lock(out_mu_);
  seal_.emplace(key, FrameDirection::kToClient, tag);
}

void ClientConn::Enqueue(OutFrame f) {
  if (out_.empty()) {
    window_start_ns_ = MonotonicNs();
    window_sent_ = 0;
    if (!write_armed_ && arm_write_) {
      write_armed_ = true;
      arm_write_(true);
    }
  }
  queued_bytes_.fetch_add(f.left(), std::memory_order_relaxed);
  out_.push_back(std::move(f));
}

void ClientConn::Send(proto::Op op, uint64_t id, int32_t status, std::span<const uint8_t> fields,
                      std::span<const uint8_t> tail) {
  uint8_t header[proto::kHeaderBytes];
  EncodeReplyHeader(op, id, status, fields.size() + tail.size(), header);
  struct iovec iov[3];
  int n = 0;
  iov[n++] = {header, sizeof header};
  if (!fields.empty()) iov[n++] = {const_cast<uint8_t*>(fields.data()), fields.size()};
  if (!tail.empty()) iov[n++] = {const_cast<uint8_t*>(tail.data()), tail.size()};
  MutexLock lock(out_mu_);
  SendLocked(iov, n, nullptr, 0);
}

void ClientConn::SendData(proto::Op op, uint64_t id, std::span<const uint8_t> fields, Buffer data,
                          size_t len) {
  uint8_t header[proto::kHeaderBytes];
  EncodeReplyHeader(op, id, 0, fields.size() + len, header);
  struct iovec iov[3];
  int n = 0;
  iov[n++] = {header, sizeof header};
  if (!fields.empty()) iov[n++] = {const_cast<uint8_t*>(fields.data()), fields.size()};
  if (len > 0) iov[n++] = {data.data(), len};
  {
    MutexLock lock(out_mu_);
    SendLocked(iov, n, len > 0 ? &data : nullptr, len);
  }
  if (data.data() != nullptr) pool_->Put(std::move(data));  // sent, or dropped
}

std::vector<uint8_t>& ClientConn::ScratchFields() {
  thread_local std::vector<uint8_t> fields;
  fields.clear();
  return fields;
}

void ClientConn::SendHeartbeat() {
  proto::FrameHeader h;
  h.op = static_cast<uint16_t>(proto::Op::kHeartbeat);
  uint8_t header[proto::kHeaderBytes];
  proto::EncodeHeader(h, header);
  struct iovec iov = {header, sizeof header};
  MutexLock lock(out_mu_);
  // Over shared memory the client also learns it from the shared page, which it looks at even
  // while it waits for room to send (a lent run can hold the requests' ring for a whole backend
  // call) and while a reply written in place holds the stream (no frame can pass it).
  SideChannel* side = transport_->capabilities().side;
  if (side != nullptr && side->SignalAlive() && in_place_ != nullptr) return;
  SendLocked(&iov, 1, nullptr, 0);
}

bool ClientConn::Flush() {
  uint64_t sent_total = 0;
  bool ok;
  {
    MutexLock lock(out_mu_);
    ok = FlushLocked(&sent_total);
  }
  if (sent_total > 0) MaybeWake();
  return ok && !closed_.load();
}

bool ClientConn::FlushLocked(uint64_t* sent) {
  uint64_t sent_total = 0;
  bool ok = true;
  while (!out_.empty() && !closed_.load() && in_place_ == nullptr) {
    OutFrame& f = out_.front();
    struct iovec iov[3];
    int n = 0;
    if (f.bytes_sent < f.bytes.size()) {
      iov[n++] = {f.bytes.data() + f.bytes_sent, f.bytes.size() - f.bytes_sent};
    }
    if (f.data_sent < f.data_len) {
      iov[n++] = {f.data.data() + f.data_sent, f.data_len - f.data_sent};
    }
    if (f.tag_sent < f.tag_len) iov[n++] = {f.tag.data() + f.tag_sent, f.tag_len - f.tag_sent};
    Result<size_t> r = n == 0 ? Result<size_t>(size_t{0}) : transport_->SendSome(iov, n);
    if (!r.ok()) {
      FailLocked(r.status());
      ok = false;
      break;
    }
    size_t done = *r;
    sent_total += done;
    size_t from_bytes = std::min(done, f.bytes.size() - f.bytes_sent);
    f.bytes_sent += from_bytes;
    done -= from_bytes;
    size_t from_data = std::min(done, f.data_len - f.data_sent);
    f.data_sent += from_data;
    f.tag_sent += done - from_data;
    if (f.left() > 0) break;  // the socket is full
    pool_->Put(std::move(f.data));
    out_.pop_front();
  }
  window_sent_ += sent_total;
  queued_bytes_.fetch_sub(sent_total, std::memory_order_relaxed);
  if (out_.empty()) {
    window_start_ns_ = 0;
    if (write_armed_ && arm_write_) {
      write_armed_ = false;
      arm_write_(false);
    }
  }
  *sent += sent_total;
  return ok;
}

uint8_t* ClientConn::BeginInPlace(size_t len, size_t align) {
  MutexLock lock(out_mu_);
  if (closed_.load() || seal_ || in_place_ != nullptr || !out_.empty()) return nullptr;
  // Room for a padding frame as well (a header and up to align - 1 bytes), when asked to align.
  const size_t pad_room = align > 1 ? proto::kHeaderBytes + align - 1 : 0;
  InPlaceData* in = transport_->capabilities().in_place;
  uint8_t* p = in == nullptr ? nullptr : in->Reserve(pad_room + proto::kHeaderBytes + len);
  if (p == nullptr) return nullptr;
  // The padding frame (its header, then its payload) and then the reply's header: the data
  // after them starts on a multiple of `align`.
  const size_t pad = align > 1 ? ShmPadBytes(reinterpret_cast<uintptr_t>(p), proto::kHeaderBytes,
                                             proto::kHeaderBytes, align)
                               : 0;
  if (pad > 0) {
    uint8_t header[proto::kHeaderBytes];
    EncodeReplyHeader(proto::Op::kHeartbeat, 0, 0, pad - proto::kHeaderBytes, header);
    std::memcpy(p, header, sizeof header);
  }
  in_place_ = p;
  in_place_pad_ = pad;
  in_place_len_ = len;
  return p + pad + proto::kHeaderBytes;
}

void ClientConn::FinishInPlace(proto::Op op, uint64_t id, const Result<size_t>& r) {
  uint64_t sent = 0;
  {
    MutexLock lock(out_mu_);
    const size_t n = r.ok() ? std::min(*r, in_place_len_) : 0;
    uint8_t header[proto::kHeaderBytes];
    EncodeReplyHeader(op, id, r.ok() ? 0 : r.status().code(), n, header);
    std::memcpy(in_place_ + in_place_pad_, header, sizeof header);
    in_place_ = nullptr;
    if (!closed_.load()) {  // (in place: the transport has InPlaceData)
      transport_->capabilities().in_place->CommitReserved(in_place_pad_ + sizeof header + n);
    }
    if (!out_.empty()) {  // what waited meanwhile: its window starts now
      window_start_ns_ = MonotonicNs();
      window_sent_ = 0;
    }
    FlushLocked(&sent);
  }
  if (sent > 0) MaybeWake();
}

Status ClientConn::ReplaceTransport(
    const std::function<Result<std::unique_ptr<Connection>>(std::unique_ptr<Connection>&)>&
        upgrade) {
  MutexLock lock(out_mu_);
  if (!out_.empty() || closed_.load()) return Status::FromErrno(EBUSY, "replies are queued");
  Result<std::unique_ptr<Connection>> next = upgrade(transport_);
  if (!next.ok()) return next.status();
  transport_ = std::move(*next);
  arm_write_ = nullptr;
  return Status::Ok();
}

void ClientConn::FailLocked(const Status& s) {
  if (closed_.exchange(true)) return;
  fmt::print(stderr, "iorelayd: connection from {}: {}; closing it\n", transport_->peer(),
             s.ToString());
  for (OutFrame& f : out_) pool_->Put(std::move(f.data));
  out_.clear();
  queued_bytes_.store(0, std::memory_order_relaxed);
  window_start_ns_ = 0;
  transport_->Shutdown();
}

void ClientConn::Shutdown() {
  std::deque<OutFrame> dropped;
  {
    MutexLock lock(out_mu_);
    closed_.store(true);
    dropped.swap(out_);
    queued_bytes_.store(0, std::memory_order_relaxed);
    window_start_ns_ = 0;
  }
  transport_->Shutdown();
  for (OutFrame& f : dropped) pool_->Put(std::move(f.data));
}

void ClientConn::SendWindow(int64_t* start_ns, uint64_t* sent) const {
  MutexLock lock(out_mu_);
  // While a reply is written in place, frames queued behind it wait for the backend, not for
  // the client: no window runs.
  *start_ns = in_place_ != nullptr ? 0 : window_start_ns_;
  *sent = window_sent_;
}

void ClientConn::RestartSendWindow(int64_t now_ns) {
  MutexLock lock(out_mu_);
  if (window_start_ns_ != 0) {
    window_start_ns_ = now_ns;
    window_sent_ = 0;
  }
}

uint64_t ClientConn::app_inflight_bytes() const {
  return session ? session->stats()->inflight.bytes() : 0;
}

void ClientConn::Charge(uint64_t n) {
  // (Charged on the event loop, as reservations are: the frame's reservation is its own.)
  const uint64_t taken = std::min(n, reserved_bytes());
  charged_bytes_.fetch_add(n, std::memory_order_relaxed);
  reserved_bytes_.fetch_sub(taken, std::memory_order_relaxed);
  if (n > taken) session->stats()->inflight.Add(n - taken);
}

bool ClientConn::Reserve(uint64_t n, uint64_t app_limit) {
  if (!session->stats()->inflight.AddUnlessOver(n, app_limit)) return false;
  reserved_bytes_.fetch_add(n, std::memory_order_relaxed);
  return true;
}

void ClientConn::ReleaseReservation() {
  const uint64_t n = reserved_bytes_.exchange(0, std::memory_order_relaxed);
  if (n == 0) return;
  session->stats()->inflight.Sub(n);  // (wakes the application's paused connections)
  MaybeWake();
}

void ClientConn::Uncharge(uint64_t n) {
  charged_bytes_.fetch_sub(n, std::memory_order_relaxed);
  session->stats()->inflight.Sub(n);  // (wakes the application's paused connections)
  MaybeWake();
}

void ClientConn::MaybeWake() {
  if (paused_.load(std::memory_order_acquire) && wake_) wake_();
}

}  // namespace iorelay::daemon
