// The iorelay wire format: length-prefixed binary frames, little-endian, versioned.
//
// Every frame is a fixed 24-byte header followed by `length` payload bytes:
//   u32 magic "IORL" | u16 version | u16 op | u64 id | u32 length | i32 status
// A reply carries the request's op with kReplyBit set, the request's id, and in
// `status` 0 or the errno a local file system would give. Payload fields are encoded
// in declaration order (see messages.h); bulk data (write data, read results) is the
// payload's tail after the fields, so it can be sent and received with writev/readv
// straight from and into the application's buffers.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace iorelay::proto {

inline constexpr uint32_t kMagic = 0x4C524F49;  // "IORL" in little-endian byte order
// The protocol version, in every frame header. A kHello frame (request or reply) decodes
// whatever its version, and its layout never changes, so that client and daemon of different
// versions learn each other's and refuse with both named (docs/daemon.md, "Protocol version").
inline constexpr uint16_t kVersion = 10;
inline constexpr size_t kHeaderBytes = 24;
inline constexpr uint16_t kReplyBit = 0x8000;
// Largest payload either side accepts: the largest I/O plus room for fields.
inline constexpr uint32_t kMaxIoBytes = 64u << 20;
inline constexpr uint32_t kMaxPayloadBytes = kMaxIoBytes + 64 * 1024;
inline constexpr uint32_t kMaxPathBytes = 4096;
inline constexpr uint32_t kMaxListEntries = 1u << 20;
// Entries in one readdir reply: with names of at most 255 bytes, a page stays near 1 MiB.
inline constexpr uint32_t kReaddirPageEntries = 4096;

struct FrameHeader {
  uint16_t op = 0;
  uint64_t id = 0;
  uint32_t length = 0;
  int32_t status = 0;
  uint16_t version = kVersion;  // the sender's protocol version
};

void EncodeHeader(const FrameHeader& h, uint8_t out[kHeaderBytes]);
// The same, as a value (the handshake transcript hashes headers).
std::array<uint8_t, kHeaderBytes> HeaderBytes(const FrameHeader& h);
// The header of the reply to request `request_op` number `id`, with `length` payload bytes.
FrameHeader ReplyHeader(uint16_t request_op, uint64_t id, size_t length, int32_t status = 0,
                        uint16_t version = kVersion);
// Strict: wrong magic, another version (but on kHello frames), an op the table does not know,
// or a payload longer than `max_payload` is a protocol error (EPROTO), never a crash or a huge
// allocation.
Result<FrameHeader> DecodeHeader(const uint8_t in[kHeaderBytes],
                                 uint32_t max_payload = kMaxPayloadBytes);

// Appends fields to a byte vector.
class Writer {
 public:
  explicit Writer(std::vector<uint8_t>* out) : out_(out) {}
  template <typename T>
  requires std::is_integral_v<T>
  void operator()(const T& v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof v);  // x86-64 and aarch64 Linux are little-endian
    out_->insert(out_->end(), b, b + sizeof b);
  }
  void operator()(const std::string& s);
  template <size_t N>
  void operator()(const std::array<uint8_t, N>& a) {
    out_->insert(out_->end(), a.begin(), a.end());
  }
  template <typename T>
  void operator()(const std::vector<T>& v) {
    (*this)(static_cast<uint32_t>(v.size()));
    for (const auto& e : v) (*this)(e);
  }
  template <typename T>
  requires requires(T t, Writer& w) { t.Visit(w); }
  void operator()(const T& msg) {
    const_cast<T&>(msg).Visit(*this);  // Visit only reads when given a Writer
  }

 private:
  std::vector<uint8_t>* out_;
};

// Reads fields from a payload with bounds checks; the first failure sticks.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}
  template <typename T>
  requires std::is_integral_v<T>
  void operator()(T& v) {
    if (!Take(sizeof v)) return;
    std::memcpy(&v, in_.data() + pos_ - sizeof v, sizeof v);
  }
  void operator()(std::string& s);
  template <size_t N>
  void operator()(std::array<uint8_t, N>& a) {
    if (Take(N)) std::memcpy(a.data(), in_.data() + pos_ - N, N);
  }
  template <typename T>
  void operator()(std::vector<T>& v) {
    uint32_t n = 0;
    (*this)(n);
    if (!ok_ || n > kMaxListEntries || n > in_.size() - pos_) {
      ok_ = false;
      return;
    }
    v.resize(n);
    for (auto& e : v) (*this)(e);
  }
  template <typename T>
  requires requires(T t, Reader& r) { t.Visit(r); }
  void operator()(T& msg) { msg.Visit(*this); }
  bool ok() const { return ok_; }
  // What follows the fields: the bulk data of a write request or read reply.
  std::span<const uint8_t> rest() const { return in_.subspan(pos_); }

 private:
  bool Take(size_t n) {
    if (!ok_ || in_.size() - pos_ < n) {
      ok_ = false;
      return false;
    }
    pos_ += n;
    return true;
  }
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// Whether every string of a message is within the wire's bound (kMaxPathBytes). A receiver
// takes a longer one for a malformed frame and closes the connection, so a sender checks first
// (the client answers ENAMETOOLONG, as the kernel does for a path past PATH_MAX).
class StringBound {
 public:
  template <typename T>
  requires std::is_integral_v<T>
  void operator()(const T&) {}
  void operator()(const std::string& s) { fits_ = fits_ && s.size() <= kMaxPathBytes; }
  template <size_t N>
  void operator()(const std::array<uint8_t, N>&) {}
  template <typename T>
  void operator()(const std::vector<T>& v) {
    for (const auto& e : v) (*this)(e);
  }
  template <typename T>
  requires requires(T t, StringBound& b) { t.Visit(b); }
  void operator()(const T& msg) {
    const_cast<T&>(msg).Visit(*this);  // Visit only reads here
  }
  bool fits() const { return fits_; }

 private:
  bool fits_ = true;
};

template <typename Msg>
bool StringsFit(const Msg& m) {
  StringBound b;
  b(m);
  return b.fits();
}

// Encodes a message's fields (not its tail data).
template <typename Msg>
std::vector<uint8_t> EncodeFields(const Msg& m) {
  std::vector<uint8_t> out;
  Writer w(&out);
  w(m);
  return out;
}

// Decodes a message's fields from a payload. With `allow_tail` false, bytes after the
// fields are an error (EPROTO); with true, they are returned through `tail`.
template <typename Msg>
Status DecodeFields(std::span<const uint8_t> payload, Msg* m, bool allow_tail = false,
                    std::span<const uint8_t>* tail = nullptr) {
  Reader r(payload);
  r(*m);
  if (!r.ok()) return Status::Protocol("truncated or malformed message");
  if (!allow_tail && !r.rest().empty()) return Status::Protocol("trailing bytes after message");
  if (tail) *tail = r.rest();
  return Status::Ok();
}

}  // namespace iorelay::proto
