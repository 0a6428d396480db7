// Incremental reading of frames from a non-blocking Connection: the event loop feeds it
// whatever has arrived; a frame's memory is taken only as its bytes arrive (fields grow, a
// write's data buffer from the pool doubles as it fills), never sized from the header alone,
// so a client announcing 64 MiB and sending 10 bytes costs 10 bytes. With HoldTails, a write's
// data is not read at all until the caller admits it (the event loop reserves its bytes first).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/frame_mac.h"
#include "common/status.h"
#include "daemon/buffer_pool.h"
#include "daemon/transport.h"
#include "proto/wire.h"

namespace iorelay::daemon {

// Hello and auth messages are tiny; a bigger frame before auth is an attack or a bug.
inline constexpr uint32_t kPreAuthMaxPayload = 1024;

class FrameReader {
 public:
  // `max_data`: the largest write data a frame may carry (the daemon's --max-io-bytes, which
  // the handshake told the client); a frame announcing more is an error before its data is
  // read, so that the bound also bounds what a write makes the daemon allocate.
  explicit FrameReader(BufferPool* pool, uint64_t max_data = proto::kMaxIoBytes)
      : pool_(pool), max_data_(max_data) {}
  ~FrameReader();

  enum class Step {
    kFrame,  // a frame is complete: header(), fields(), TakeData()
    kTail,   // (HoldTails) a frame's header announces data_len() bytes of data: AdmitTail()
    kAgain,  // nothing more to read now
    kEof,    // the client's end between frames: EOF, or a reset (it left with replies unread)
    kError,  // read error, end inside a frame, or a malformed header: error()
  };
  // Reads from `conn` until one frame is complete or nothing more is there. `scratch` is the
  // event loop's receive buffer (bytes of the next frames left in it are kept here). With
  // `authed`, payloads may be as large as their op allows and a write's data goes to a pool
  // buffer; before, kPreAuthMaxPayload bounds them.
  Step Next(Connection* conn, bool authed, std::span<uint8_t> scratch);

  // A new turn of reading (an event): Next receives again even after a short receive. Within
  // a turn, a receive that did not fill its buffer means the socket was empty then; with
  // edge-triggered epoll, bytes arriving later bring a new event, so Next stops there
  // (kAgain) instead of paying for a receive that would only say EAGAIN.
  void NewTurn() { maybe_empty_ = false; }
  // A short receive no longer means that the connection is empty: events of it came while the
  // caller did not read it (paused, a handler of it running), or the client's end came with its
  // last bytes, and no later event will tell of what sits behind what one receive takes. So
  // from now on Next does not stop at a short receive, until a receive says EAGAIN (which
  // re-arms the edge-triggered event) or the end.
  void ReceiveUntilEmpty() { until_again_ = true; }

  // From now on, a frame whose header announces data (a write's tail, data_len() > 0) stops
  // there: Next returns kTail, and again on every call, reading nothing more of the connection,
  // until AdmitTail(). Its fields and data are then read as usual. Frames without data, and
  // frames before authentication, are not held.
  void HoldTails() { hold_tails_ = true; }
  void AdmitTail();
  // The frame being read was admitted by AdmitTail and is not complete yet.
  bool receiving_tail() const { return admitted_ && state_ != State::kDone; }
  // From now on, the capacity of the pool buffers this reader holds for data still arriving is
  // counted in `gauge` (not data lent in place by shared memory, which is the ring's memory;
  // not a frame's data once taken). Called before the first Next; `gauge` outlives the reader.
  void CountBuffersIn(ByteGauge* gauge) { gauge_ = gauge; }

  // From the next frame on, each frame's data is followed by its tag (common/frame_mac.h),
  // checked before the frame is returned: a frame that fails it is kError, and
  // integrity_failed() tells that apart from other errors. Called between frames.
  void Seal(const SessionKey& key, TagAlgorithm tag = TagAlgorithm::kPoly1305) {
    seal_.emplace(key, FrameDirection::kToDaemon, tag);
  }
  bool sealed() const { return seal_.has_value(); }
  bool integrity_failed() const { return integrity_failed_; }

  const proto::FrameHeader& header() const { return header_; }
  // The fields (all the payload, except a write's data).
  std::vector<uint8_t>& fields() { return fields_; }
  // A write's data (data_len() bytes; an empty buffer when none).
  Buffer TakeData();
  uint64_t data_len() const { return data_len_; }
  const std::string& error() const { return error_; }
  // Bytes of the frame being read that have arrived (its header included).
  uint64_t partial_bytes() const { return header_got_ + fields_.size() + data_got_ + tag_got_; }
  // The same while a frame has begun and is not complete; 0 between frames (a complete frame
  // waiting for the next Next counts as between).
  uint64_t incomplete_bytes() const { return state_ == State::kDone ? 0 : partial_bytes(); }
  // Bytes taken from the connection since the reader began, whatever frame they belong to
  // (received, or borrowed in place from shared memory): only grows, so that the slow-sender
  // rule measures what a client sends, not how far the frame incomplete at a tick has come.
  uint64_t received_bytes() const { return received_; }

 private:
  // kAdmit: a header with data was read and the tail is held (HoldTails).
  enum class State { kHeader, kAdmit, kFields, kData, kTag, kDone };
  // Takes bytes for the frame being read; returns how many it used (< n only once done or
  // held at a tail's header).
  size_t Consume(const uint8_t* p, size_t n, bool authed);
  bool DecodeHeaderBytes(bool authed);
  // Makes room for at least `want` more data bytes (doubling, up to data_len_).
  bool GrowData(uint64_t want);
  // The state after the payload: the tag on a sealed connection, else done.
  State AfterPayload() const { return seal_ ? State::kTag : State::kDone; }
  void MacUpdate(const uint8_t* p, size_t n) {
    if (mac_) mac_->Update({p, n});
  }
  bool CheckTag();
  void Reset();
  // Gives data_ back to the pool (and takes it out of the gauge).
  void PutData();

  BufferPool* pool_;
  const uint64_t max_data_;
  State state_ = State::kHeader;
  uint8_t header_bytes_[proto::kHeaderBytes];
  size_t header_got_ = 0;
  proto::FrameHeader header_;
  std::vector<uint8_t> fields_;
  size_t fields_want_ = 0;
  Buffer data_;
  uint64_t data_len_ = 0;
  uint64_t data_got_ = 0;
  std::vector<uint8_t> pending_;  // received bytes of later frames
  size_t pending_pos_ = 0;
  std::string error_;
  bool maybe_empty_ = false;
  bool until_again_ = false;
  std::optional<FrameSealer> seal_;  // set once authenticated on a sealed connection
  std::optional<FrameMac> mac_;      // the frame being read, when sealed
  FrameTag tag_{};
  size_t tag_got_ = 0;
  bool integrity_failed_ = false;
  uint64_t received_ = 0;
  bool hold_tails_ = false;
  bool admitted_ = false;  // the frame being read was held and admitted
  ByteGauge* gauge_ = nullptr;
};

}  // namespace iorelay::daemon
