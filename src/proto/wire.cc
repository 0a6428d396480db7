// Frame header and string coding; message field coding is generic (wire.h).
#include "proto/wire.h"

#include "proto/messages.h"

namespace iorelay::proto {

void EncodeHeader(const FrameHeader& h, uint8_t out[kHeaderBytes]) {
  uint32_t magic = kMagic;
  std::memcpy(out + 0, &magic, 4);
  std::memcpy(out + 4, &h.version, 2);
  std::memcpy(out + 6, &h.op, 2);
  std::memcpy(out + 8, &h.id, 8);
  std::memcpy(out + 16, &h.length, 4);
  std::memcpy(out + 20, &h.status, 4);
}

std::array<uint8_t, kHeaderBytes> HeaderBytes(const FrameHeader& h) {
  std::array<uint8_t, kHeaderBytes> out;
  EncodeHeader(h, out.data());
  return out;
}

FrameHeader ReplyHeader(uint16_t request_op, uint64_t id, size_t length, int32_t status,
                        uint16_t version) {
  return FrameHeader{static_cast<uint16_t>(request_op | kReplyBit), id,
                     static_cast<uint32_t>(length), status, version};
}

Result<FrameHeader> DecodeHeader(const uint8_t in[kHeaderBytes], uint32_t max_payload) {
  uint32_t magic;
  FrameHeader h;
  std::memcpy(&magic, in + 0, 4);
  std::memcpy(&h.version, in + 4, 2);
  std::memcpy(&h.op, in + 6, 2);
  std::memcpy(&h.id, in + 8, 8);
  std::memcpy(&h.length, in + 16, 4);
  std::memcpy(&h.status, in + 20, 4);
  if (magic != kMagic) return Status::Protocol("bad frame magic");
  const bool hello = (h.op & ~kReplyBit) == static_cast<uint16_t>(Op::kHello);
  if (h.version != kVersion && !hello) {
    return Status::Protocol("frame of protocol version " + std::to_string(h.version) +
                            ", expected " + std::to_string(kVersion));
  }
  if (!IsKnownOp(static_cast<uint16_t>(h.op & ~kReplyBit))) return Status::Protocol("unknown op");
  if (h.length > max_payload) return Status::Protocol("frame payload too large");
  // A request may carry no more than its op's largest message (and data, for writes).
  if ((h.op & kReplyBit) == 0 && h.length > Info(static_cast<Op>(h.op)).max_payload) {
    return Status::Protocol(std::string("payload too large for ") + OpName(static_cast<Op>(h.op)));
  }
  return h;
}

void Writer::operator()(const std::string& s) {
  (*this)(static_cast<uint32_t>(s.size()));
  out_->insert(out_->end(), s.begin(), s.end());
}

void Reader::operator()(std::string& s) {
  uint32_t n = 0;
  (*this)(n);
  if (!ok_) return;
  if (n > kMaxPathBytes || !Take(n)) {
    ok_ = false;
    return;
  }
  s.assign(reinterpret_cast<const char*>(in_.data() + pos_ - n), n);
}

}  // namespace iorelay::proto
