// Integrity of the frames that follow the handshake on TCP: each frame carries a 16-byte tag
// (after its payload) under the session key and the frame's position in its direction, so a
// frame altered, dropped, replayed or reordered by a man in the middle fails the check. The
// session key is a MAC of the handshake's transcript under the job credential
// (common/handshake_transcript.h), which only the two ends can compute. Payloads are not
// encrypted.
//
// Two tag algorithms; the handshake picks one per connection (AuthReply.sealed, inside the
// transcript, so a man in the middle cannot change the choice):
// - kPoly1305: Poly1305 under a one-time key that ChaCha20 derives from the session key and the
//   frame's number (the MAC half of ChaCha20-Poly1305). Any CPU.
// - kAesGmac: AES-256-GCM with the frame as additional data and no message (GMAC), under a key
//   derived from the session key, with the frame's number as nonce; only where both ends have
//   AES and carry-less multiply instructions (libsodium's AES-GCM needs them: constant time, and
//   a 4 KiB frame's tag costs about a third of Poly1305's). libsodium's AES-GCM takes the data
//   in one piece, so the frame's bytes are gathered first; a frame over kGmacMaxFrameBytes is
//   tagged with Poly1305 instead, as both ends know from its length (the copy would cost more
//   memory than the algorithm saves).
// Either way each frame number is used once per key and direction.
#pragma once

#include <sodium.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/auth.h"

namespace iorelay {

inline constexpr size_t kFrameTagBytes = 16;
using FrameTag = std::array<uint8_t, kFrameTagBytes>;
using SessionKey = std::array<uint8_t, 32>;

// The values of AuthReply.sealed (0: not sealed).
enum class TagAlgorithm : uint32_t { kPoly1305 = 1, kAesGmac = 2 };

// Frames of at most this many bytes (header, fields, data) get an AES-GMAC tag when kAesGmac
// is chosen; longer ones a Poly1305 tag.
inline constexpr size_t kGmacMaxFrameBytes = 64 * 1024;

// True when this CPU runs libsodium's AES-GCM (AES-NI and PCLMUL).
bool AesGmacAvailable();

// Which way a frame travels: each direction numbers its frames from 0.
enum class FrameDirection : uint8_t { kToDaemon = 0, kToClient = 1 };

// libsodium's expanded AES key (16-byte aligned).
struct GmacKey;

// The tag of one frame, computed over its bytes as they are given (header, fields, data...).
class FrameMac {
 public:
  // Poly1305 only (the algorithm of every connection before AES-GMAC; the tests' reference).
  FrameMac(const SessionKey& key, FrameDirection direction, uint64_t sequence);
  // kAesGmac: gathers up to kGmacMaxFrameBytes, then falls back to Poly1305 under `key`. The
  // gathering buffer is `spare`'s, given back to it at the end (so that a connection's frames
  // reuse one buffer instead of allocating one each; `spare` outlives this MAC).
  FrameMac(const SessionKey& key, std::shared_ptr<const GmacKey> gmac, FrameDirection direction,
           uint64_t sequence, std::vector<uint8_t>* spare);
  FrameMac(FrameMac&&) noexcept;
  FrameMac& operator=(FrameMac&&) noexcept;
  ~FrameMac();
  void Update(std::span<const uint8_t> bytes);
  FrameTag Final();

 private:
  void StartPoly1305();

  SessionKey key_;  // (kept only while gathering: the fallback needs it)
  FrameDirection dir_;
  uint64_t sequence_;
  std::shared_ptr<const GmacKey> gmac_;  // set while gathering for AES-GMAC
  std::vector<uint8_t> gathered_;
  std::vector<uint8_t>* spare_ = nullptr;  // where gathered_'s memory goes back
  crypto_onetimeauth_poly1305_state state_{};
};

// One direction of a sealed connection: the key, the algorithm and the next frame's number.
class FrameSealer {
 public:
  FrameSealer(const SessionKey& key, FrameDirection direction,
              TagAlgorithm algorithm = TagAlgorithm::kPoly1305);
  // A MAC for the next frame (numbers advance once per call).
  FrameMac Next();
  TagAlgorithm algorithm() const {
    return gmac_ ? TagAlgorithm::kAesGmac : TagAlgorithm::kPoly1305;
  }

 private:
  SessionKey key_;
  FrameDirection dir_;
  std::shared_ptr<const GmacKey> gmac_;  // kAesGmac
  std::vector<uint8_t> spare_;           // kAesGmac: the gathering buffer between frames
  uint64_t sequence_ = 0;
};

// Constant-time tag comparison.
bool TagsEqual(const FrameTag& a, const FrameTag& b);

}  // namespace iorelay
