// Integrity of the frames that follow the handshake on TCP: each frame carries a Poly1305 tag
// (16 bytes, after its payload) under a one-time key that ChaCha20 derives from the session key
// and the frame's position in its direction, so a frame altered, dropped, replayed or reordered
// by a man in the middle fails the check. The session key is a MAC of the handshake's
// transcript under the job credential (common/handshake_transcript.h), which only the two ends
// can compute. (This is the MAC half of ChaCha20-Poly1305; payloads are not encrypted.)
#pragma once

#include <sodium.h>

#include <array>
#include <cstdint>
#include <span>

#include "common/auth.h"

namespace iorelay {

inline constexpr size_t kFrameTagBytes = 16;
using FrameTag = std::array<uint8_t, kFrameTagBytes>;
using SessionKey = std::array<uint8_t, 32>;

// Which way a frame travels: each direction numbers its frames from 0.
enum class FrameDirection : uint8_t { kToDaemon = 0, kToClient = 1 };

// The tag of one frame, computed over its bytes as they are given (header, fields, data...).
class FrameMac {
 public:
  FrameMac(const SessionKey& key, FrameDirection direction, uint64_t sequence);
  void Update(std::span<const uint8_t> bytes);
  FrameTag Final();

 private:
  crypto_onetimeauth_poly1305_state state_;
};

// One direction of a sealed connection: the key and the next frame's number.
class FrameSealer {
 public:
  FrameSealer(const SessionKey& key, FrameDirection direction) : key_(key), dir_(direction) {}
  // A MAC for the next frame (numbers advance once per call).
  FrameMac Next() { return FrameMac(key_, dir_, sequence_++); }

 private:
  SessionKey key_;
  FrameDirection dir_;
  uint64_t sequence_ = 0;
};

// Constant-time tag comparison.
bool TagsEqual(const FrameTag& a, const FrameTag& b);

}  // namespace iorelay
