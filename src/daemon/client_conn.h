// One client connection as the daemon sees it: the transport, the outgoing queue (replies the
// socket has not taken yet), the count of requests in flight (for heartbeats and draining), the
// bytes it holds (for back-pressure and the slow-reader rule) and the session it was admitted to.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/frame_mac.h"
#include "common/mutex.h"
#include "daemon/buffer_pool.h"
#include "daemon/session.h"
#include "daemon/transport.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace iorelay::daemon {

class ClientConn {
 public:
  // `pool` takes back the read buffers of replies once sent (it outlives the connection).
  ClientConn(std::unique_ptr<Connection> transport, BufferPool* pool)
      : transport_(std::move(transport)), pool_(pool) {}
  ~ClientConn();

  Connection* transport() { return transport_.get(); }

  // Sends one reply frame (op with kReplyBit) from any thread, never blocking: what the socket
  // does not take now is copied to the connection's outgoing queue, which its event loop
  // flushes when the socket is writable. A failed send shuts the connection down; later sends
  // are dropped.
  void Send(proto::Op op, uint64_t id, int32_t status, std::span<const uint8_t> fields,
            std::span<const uint8_t> tail = {});
  // The same with a tail of `len` bytes owned by `data` (a read's buffer): queued without a copy,
  // given back to the pool once sent or dropped.
  void SendData(proto::Op op, uint64_t id, std::span<const uint8_t> fields, Buffer data,
                size_t len);
  // A read's reply written in place (shared memory): room for the reply's header and `len`
  // bytes of data is taken in the outgoing stream, and where the data goes is returned; null
  // when that is not possible now (a socket, a sealed connection, replies queued, no room).
  // Until FinishInPlace, the connection's other frames wait in its queue. With `align` > 1 the
  // data starts at a multiple of it in memory (O_DIRECT), after a padding frame (a heartbeat
  // reply whose payload the client skips) when the stream's position needs one.
  uint8_t* BeginInPlace(size_t len, size_t align = 0);
  // Sends the reply begun: its `*r` bytes of data (at most `len`), or an error reply.
  void FinishInPlace(proto::Op op, uint64_t id, const Result<size_t>& r);
  template <typename Msg>
  void Reply(proto::Op op, uint64_t id, const Msg& msg, std::span<const uint8_t> tail = {}) {
    std::vector<uint8_t>& fields = ScratchFields();
    proto::Writer w(&fields);
    w(msg);
    Send(op, id, 0, fields, tail);
  }
  // A per-thread, emptied vector whose capacity is reused by every reply of the thread.
  static std::vector<uint8_t>& ScratchFields();
  void ReplyError(proto::Op op, uint64_t id, int err) { Send(op, id, err, {}); }
  void SendHeartbeat();
  // From now on every frame sent carries its tag (common/frame_mac.h). The tag is computed
  // under the queue lock, so frames are numbered in the order they enter the stream whichever
  // thread sends them (replies, heartbeats). Called by the loop right after the auth reply,
  // before any request is admitted.
  void Seal(const SessionKey& key, TagAlgorithm tag = TagAlgorithm::kPoly1305);

  // Event loop side: replaces the transport by what `upgrade` makes of the current one (it may
  // send on it first, and takes it over on success), with nothing queued and no send in
  // between; the write-arming callback is dropped (the new transport wakes the loop itself).
  // EBUSY when replies are queued.
  Status ReplaceTransport(
      const std::function<Result<std::unique_ptr<Connection>>(std::unique_ptr<Connection>&)>&
          upgrade);

  // Event loop side: sends what the socket takes of the queue. False when the connection
  // failed (it is then shut down).
  bool Flush();
  // Shuts the transport down and drops the queue. Any thread; idempotent.
  void Shutdown();
  bool closed() const { return closed_.load(); }

  // Bytes waiting in the outgoing queue.
  uint64_t queued_bytes() const { return queued_bytes_.load(std::memory_order_relaxed); }
  // The slow-reader window: since when the queue has been non-empty without a reset (0: empty),
  // and the bytes sent since then.
  void SendWindow(int64_t* start_ns, uint64_t* sent) const;
  // Starts a new window at `now_ns` (the previous one made enough progress).
  void RestartSendWindow(int64_t now_ns);

  // Back-pressure: bytes of data requests admitted and not yet answered (reads: the length
  // asked; writes: the data received; at least 4 KiB a request), plus the bytes reserved for the
  // frame being read (Reserve: a write's data, a read's reply), plus queued_bytes(). The
  // admitted and reserved bytes count for the session's application too (app_inflight_bytes()).
  //
  // Charge takes over the reservation, if any: the request of the frame whose bytes were
  // reserved is counted once (its charge is never below the reservation: at least a write's
  // data, and a read's reservation is its charge).
  void Charge(uint64_t n);
  void Uncharge(uint64_t n);
  // Event loop side, authenticated: reserves `n` bytes for the frame being read before it costs
  // them (a write's data once its header is read, before any of that data is; a read's reply
  // before the request is handled), when the application's bytes are at or below `app_limit`
  // (the rule by which a connection is read at all: so a frame larger than the limit still
  // passes, when the rest of the application's requests are answered). The check and the add
  // are one atomic step. False, and nothing reserved, when they are over it.
  bool Reserve(uint64_t n, uint64_t app_limit);
  // Event loop side: gives back what is still reserved (the connection closed inside the frame,
  // or its request was refused before being admitted); wakes the connections it unblocks.
  void ReleaseReservation();
  uint64_t reserved_bytes() const { return reserved_bytes_.load(std::memory_order_relaxed); }
  uint64_t held_bytes() const {
    return charged_bytes_.load(std::memory_order_relaxed) + reserved_bytes() + queued_bytes();
  }
  // The admitted and reserved bytes of every connection of this connection's application (0
  // before auth).
  uint64_t app_inflight_bytes() const;
  // Set by the event loop while it does not read this connection (held_bytes() over the limit);
  // `wake` is called (any thread) when held bytes fall and reading may resume.
  void SetPaused(bool paused) { paused_.store(paused, std::memory_order_release); }
  void SetWake(std::function<void()> wake) { wake_ = std::move(wake); }
  // Calls the wake callback if reading is paused (any thread).
  void MaybeWake();
  // Called (under the queue lock) with true when the queue stops being empty, false when it
  // empties again: the loop then waits for the socket's writability only while it matters.
  void SetArmWrite(std::function<void(bool)> arm) { arm_write_ = std::move(arm); }

  // While a metadata handler of this connection runs on the handler pool, its loop does not
  // read it (requests are handled in order, as when each connection had its thread).
  // HandlerDone clears it and wakes the loop.
  std::atomic<bool> handler_busy{false};
  void HandlerDone() {
    handler_busy.store(false, std::memory_order_release);
    if (wake_) wake_();
  }

  // Requests received and not yet answered.
  std::atomic<int> outstanding{0};
  // Pipes of the daemon's pool holding this connection's piped writes (PipePool::Get).
  std::atomic<uint32_t> pool_pipes{0};
  // Set once by the event loop at authentication, before any request is queued.
  std::shared_ptr<Session> session;

  // Whether the connection still counts against --max-handshakes. Whoever ends that first (its
  // loop at authentication or close, the accepting loop evicting it) gets true and takes it off
  // the count, once. Any thread.
  bool in_handshake() const { return in_handshake_.load(); }
  bool EndHandshake() { return in_handshake_.exchange(false); }
  // Asked by the accepting loop to make room (--handshake-evict-ms): its own loop closes it
  // unless it was authenticated by then. Any thread.
  void RequestEviction() { evict_.store(true); }
  bool eviction_requested() const { return evict_.load(); }

 private:
  struct OutFrame {
    std::vector<uint8_t> bytes;  // header, fields, copied tail: what is left of them
    size_t bytes_sent = 0;
    Buffer data;  // owned tail, after `bytes`
    size_t data_len = 0;
    size_t data_sent = 0;
    FrameTag tag{};  // after the data, on a sealed connection
    size_t tag_len = 0;
    size_t tag_sent = 0;
    uint64_t left() const {
      return bytes.size() - bytes_sent + data_len - data_sent + tag_len - tag_sent;
    }
  };
  // With out_mu_ held: tags the frame `iov` (n entries; with `data`, the last one is that owned
  // tail) when sealed, sends it directly when nothing is queued, queues the rest.
  void SendLocked(struct iovec* iov, int n, Buffer* data, size_t data_len) REQUIRES(out_mu_);
  void Enqueue(OutFrame f) REQUIRES(out_mu_);
  // With out_mu_ held: Flush; adds the bytes sent to `*sent`.
  bool FlushLocked(uint64_t* sent) REQUIRES(out_mu_);
  // With out_mu_ held: a send failed; logs it, drops the queue, shuts the transport down.
  void FailLocked(const Status& s) REQUIRES(out_mu_);

  std::unique_ptr<Connection> transport_;
  BufferPool* pool_;
  mutable Mutex out_mu_;  // per connection; held only for non-blocking sends and the queue
  std::deque<OutFrame> out_ GUARDED_BY(out_mu_);
  int64_t window_start_ns_ GUARDED_BY(out_mu_) = 0;
  uint64_t window_sent_ GUARDED_BY(out_mu_) = 0;
  std::atomic<uint64_t> queued_bytes_{0};
  std::atomic<uint64_t> charged_bytes_{0};
  std::atomic<uint64_t> reserved_bytes_{0};  // written by the event loop only
  std::atomic<bool> closed_{false};
  std::atomic<bool> in_handshake_{true};
  std::atomic<bool> evict_{false};
  std::atomic<bool> paused_{false};
  bool write_armed_ GUARDED_BY(out_mu_) = false;
  uint8_t* in_place_ GUARDED_BY(out_mu_) = nullptr;  // the reply begun in place
  size_t in_place_pad_ GUARDED_BY(out_mu_) = 0;      // its padding frame's bytes
  size_t in_place_len_ GUARDED_BY(out_mu_) = 0;      // its data room
  std::optional<FrameSealer> seal_ GUARDED_BY(out_mu_);
  std::function<void()> wake_;           // set before the connection is shared
  std::function<void(bool)> arm_write_;  // likewise
};

}  // namespace iorelay::daemon
