// Frame tags: a Poly1305 one-time key per frame from ChaCha20 (see frame_mac.h).
#include "common/frame_mac.h"

namespace iorelay {
FrameMac::FrameMac(const SessionKey& key, FrameDirection direction, uint64_t sequence) {
  // The 96-bit ChaCha20 nonce: the direction, three zero bytes, the frame's number.
  std::array<uint8_t, crypto_stream_chacha20_ietf_NONCEBYTES> nonce{};
  nonce[0] = static_cast<uint8_t>(direction);
  for (int i = 0; i < 8; ++i) nonce[4 + i] = static_cast<uint8_t>(sequence >> (8 * i));
  std::array<uint8_t, crypto_onetimeauth_poly1305_KEYBYTES> one_time{};
  crypto_stream_chacha20_ietf(one_time.data(), one_time.size(), nonce.data(), key.data());
  crypto_onetimeauth_poly1305_init(&state_, one_time.data());
  sodium_memzero(one_time.data(), one_time.size());
}

void FrameMac::Update(std::span<const uint8_t> bytes) {
  if (!bytes.empty()) crypto_onetimeauth_poly1305_update(&state_, bytes.data(), bytes.size());
}

FrameTag FrameMac::Final() {
  FrameTag tag;
  crypto_onetimeauth_poly1305_final(&state_, tag.data());
  return tag;
}

bool TagsEqual(const FrameTag& a, const FrameTag& b) {
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace iorelay
