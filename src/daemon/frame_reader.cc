// FrameReader: a header/fields/data state machine fed by non-blocking receives; small frames
// cost one recv for several of them, large data is received straight into its buffer.
#include "daemon/frame_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/shm_ring.h"
#include "proto/messages.h"

namespace iorelay::daemon {
namespace {
constexpr uint64_t kFirstDataChunk = 64 * 1024;
// A write's data of at least this many bytes is taken in place from a connection that lends
// (InPlaceData::Borrow): copying it out would cost more than the ring room it holds meanwhile.
constexpr uint64_t kBorrowMinBytes = kShmInPlaceMinBytes;

// What a buffer counts for in the gauge: its capacity when the pool's (a lent one is not).
uint64_t OwnedBytes(const Buffer& b) {
  return b.data() != nullptr && !b.leased() ? b.capacity() : 0;
}
}  // namespace

FrameReader::~FrameReader() { PutData(); }

void FrameReader::PutData() {
  if (gauge_ != nullptr) gauge_->Sub(OwnedBytes(data_));
  pool_->Put(std::move(data_));
}

Buffer FrameReader::TakeData() {
  if (gauge_ != nullptr) gauge_->Sub(OwnedBytes(data_));
  return std::move(data_);
}

void FrameReader::AdmitTail() {
  if (state_ != State::kAdmit) return;
  admitted_ = true;
  state_ = fields_want_ > 0 ? State::kFields : State::kData;
}

void FrameReader::Reset() {
  state_ = State::kHeader;
  header_got_ = 0;
  fields_.clear();
  if (fields_.capacity() > (1u << 20)) std::vector<uint8_t>().swap(fields_);
  fields_want_ = 0;
  PutData();
  data_len_ = 0;
  data_got_ = 0;
  tag_got_ = 0;
  admitted_ = false;
  mac_.reset();
}

bool FrameReader::CheckTag() {
  if (TagsEqual(tag_, mac_->Final())) return true;
  integrity_failed_ = true;
  error_ = "a frame failed its integrity check (altered on the way?)";
  return false;
}

bool FrameReader::DecodeHeaderBytes(bool authed) {
  Result<proto::FrameHeader> h =
      proto::DecodeHeader(header_bytes_, authed ? proto::kMaxPayloadBytes : kPreAuthMaxPayload);
  if (!h.ok()) {
    error_ = h.status().message();
    return false;
  }
  header_ = *h;
  if (seal_) {
    mac_.emplace(seal_->Next());
    MacUpdate(header_bytes_, sizeof header_bytes_);
  }
  auto op = static_cast<proto::Op>(header_.op);
  if ((header_.op & proto::kReplyBit) != 0 || op == proto::Op::kHeartbeat) {
    error_ = "a reply or heartbeat frame from a client";
    return false;
  }
  if (authed && proto::Info(op).tail) {
    const size_t field_bytes = proto::Info(op).max_fields;
    if (header_.length < field_bytes) {
      error_ = "write frame shorter than its fields";
      return false;
    }
    fields_want_ = field_bytes;
    data_len_ = header_.length - field_bytes;
    if (data_len_ > max_data_) {
      error_ = "a write of " + std::to_string(data_len_) + " bytes, over the daemon's " +
               std::to_string(max_data_) + " (--max-io-bytes, told at the handshake)";
      return false;
    }
  } else {
    fields_want_ = header_.length;
    data_len_ = 0;
  }
  if (hold_tails_ && data_len_ > 0) {
    state_ = State::kAdmit;
  } else {
    state_ = fields_want_ > 0 ? State::kFields : (data_len_ > 0 ? State::kData : AfterPayload());
  }
  return true;
}

bool FrameReader::GrowData(uint64_t want) {
  const uint64_t need = std::min(data_len_, data_got_ + want);
  if (data_.data() != nullptr && data_.capacity() >= need) return true;
  uint64_t cap = std::max<uint64_t>(kFirstDataChunk, data_.capacity() * 2);
  cap = std::min(data_len_, std::max(cap, need));
  Buffer bigger = pool_->Get(cap);
  if (bigger.data() == nullptr) {
    error_ = "no memory for a write's data";
    return false;
  }
  if (gauge_ != nullptr) gauge_->Add(OwnedBytes(bigger));  // (both held while copying)
  if (data_got_ > 0) std::memcpy(bigger.data(), data_.data(), data_got_);
  PutData();
  data_ = std::move(bigger);
  return true;
}

size_t FrameReader::Consume(const uint8_t* p, size_t n, bool authed) {
  size_t used = 0;
  while (used < n && state_ != State::kDone && state_ != State::kAdmit) {
    if (state_ == State::kHeader) {
      size_t take = std::min(n - used, sizeof header_bytes_ - header_got_);
      std::memcpy(header_bytes_ + header_got_, p + used, take);
      header_got_ += take;
      used += take;
      if (header_got_ == sizeof header_bytes_ && !DecodeHeaderBytes(authed)) return SIZE_MAX;
    } else if (state_ == State::kFields) {
      size_t take = std::min(n - used, fields_want_ - fields_.size());
      fields_.insert(fields_.end(), p + used, p + used + take);
      MacUpdate(p + used, take);
      used += take;
      if (fields_.size() == fields_want_) state_ = data_len_ > 0 ? State::kData : AfterPayload();
    } else if (state_ == State::kTag) {
      size_t take = std::min(n - used, tag_.size() - tag_got_);
      std::memcpy(tag_.data() + tag_got_, p + used, take);
      tag_got_ += take;
      used += take;
      if (tag_got_ == tag_.size()) {
        if (!CheckTag()) return SIZE_MAX;
        state_ = State::kDone;
      }
    } else {
      size_t take = static_cast<size_t>(std::min<uint64_t>(n - used, data_len_ - data_got_));
      if (!GrowData(take)) return SIZE_MAX;
      std::memcpy(data_.data() + data_got_, p + used, take);
      MacUpdate(p + used, take);
      data_got_ += take;
      used += take;
      if (data_got_ == data_len_) state_ = AfterPayload();
    }
  }
  return used;
}

FrameReader::Step FrameReader::Next(Connection* conn, bool authed, std::span<uint8_t> scratch) {
  if (state_ == State::kDone) Reset();
  for (;;) {
    if (state_ == State::kAdmit) return Step::kTail;  // (the bytes after it wait in pending_)
    if (pending_pos_ < pending_.size()) {
      size_t used = Consume(pending_.data() + pending_pos_, pending_.size() - pending_pos_, authed);
      if (used == SIZE_MAX) return Step::kError;
      pending_pos_ += used;
      if (pending_pos_ == pending_.size()) {
        pending_.clear();
        pending_pos_ = 0;
        if (pending_.capacity() > (1u << 20)) std::vector<uint8_t>().swap(pending_);
      }
      if (state_ == State::kDone) return Step::kFrame;
      continue;
    }
    // A connection that lends gives a large write's data in place when it has all arrived
    // (otherwise it is received as from a socket).
    InPlaceData* in_place = seal_ ? nullptr : conn->capabilities().in_place;
    const bool lends = in_place != nullptr;
    if (lends && state_ == State::kData && data_got_ == 0 && data_len_ >= kBorrowMinBytes) {
      Buffer lent = in_place->Borrow(data_len_);
      if (lent.data() != nullptr) {
        PutData();
        data_ = std::move(lent);
        received_ += data_len_;
        data_got_ = data_len_;
        state_ = AfterPayload();
        return Step::kFrame;
      }
    }
    // A large rest of data goes straight into its buffer (no copy through the scratch).
    const bool direct = state_ == State::kData && data_len_ - data_got_ >= scratch.size();
    uint8_t* dst = scratch.data();
    size_t room = scratch.size();
    if (lends && state_ == State::kHeader) {
      room = sizeof header_bytes_ - header_got_;  // (leaves a large write's data unread)
    } else if (lends && state_ == State::kFields &&
               (data_len_ >= kBorrowMinBytes ||
                header_.op == static_cast<uint16_t>(proto::Op::kPad))) {
      // (A kPad frame comes before a large write: reading past it would take that write's
      // header, fields and first data with it.)
      room = fields_want_ - fields_.size();
    }
    if (direct) {
      if (!GrowData(scratch.size())) return Step::kError;
      dst = reinterpret_cast<uint8_t*>(data_.data()) + data_got_;
      room = static_cast<size_t>(std::min<uint64_t>(data_.capacity(), data_len_) - data_got_);
    }
    if (maybe_empty_ && !until_again_) return Step::kAgain;
    Result<size_t> got = conn->Recv(dst, room);
    if (!got.ok()) {
      if (got.status().code() == EAGAIN || got.status().code() == EWOULDBLOCK) {
        until_again_ = false;
        return Step::kAgain;
      }
      // A reset between frames is the client's end, as EOF is: a process that closes its
      // connection with bytes unread (the reply to a close it posted without waiting, client.h
      // Post) makes its kernel reset the connection instead of closing it. Not an error.
      if (got.status().code() == ECONNRESET && state_ == State::kHeader && header_got_ == 0) {
        return Step::kEof;
      }
      error_ = got.status().ToString();
      return Step::kError;
    }
    maybe_empty_ = *got < room;
    received_ += *got;
    if (*got == 0) {
      if (state_ == State::kHeader && header_got_ == 0) return Step::kEof;
      error_ = "connection closed inside a frame";
      return Step::kError;
    }
    if (direct) {
      MacUpdate(dst, *got);
      data_got_ += *got;
      if (data_got_ == data_len_) {
        state_ = AfterPayload();
        if (state_ == State::kDone) return Step::kFrame;
      }
      continue;
    }
    size_t used = Consume(scratch.data(), *got, authed);
    if (used == SIZE_MAX) return Step::kError;
    if (used < *got) pending_.assign(scratch.data() + used, scratch.data() + *got);
    if (state_ == State::kDone) return Step::kFrame;
  }
}

}  // namespace iorelay::daemon
