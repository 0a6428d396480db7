// Frame tags: the same bytes in any split give the same tag; a changed byte, another frame
// number, another direction or another session key give another; with AES-GMAC, frames up to
// kGmacMaxFrameBytes get AES-GCM's tag over them as additional data, longer ones Poly1305's.
#include "common/frame_mac.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/handshake_transcript.h"

namespace iorelay {
namespace {

SessionKey Key(uint8_t seed) {
  Secret s{};
  s[0] = seed;
  TranscriptDigest d{};
  d[1] = 2;
  return TranscriptMac(s, TranscriptMacRole::kSessionKey, d);
}

FrameTag Tag(const SessionKey& k, FrameDirection d, uint64_t seq, std::span<const uint8_t> a,
             std::span<const uint8_t> b = {}) {
  FrameMac m(k, d, seq);
  m.Update(a);
  m.Update(b);
  return m.Final();
}

TEST(FrameMacTest, SplitDoesNotMatterContentDoes) {
  std::vector<uint8_t> frame(5000);
  for (size_t i = 0; i < frame.size(); ++i) frame[i] = static_cast<uint8_t>(i * 7);
  const SessionKey k = Key(1);
  const std::span<const uint8_t> all(frame);
  const FrameTag whole = Tag(k, FrameDirection::kToDaemon, 0, all);
  EXPECT_TRUE(
      TagsEqual(whole, Tag(k, FrameDirection::kToDaemon, 0, all.first(24), all.subspan(24))));
  frame[4999] ^= 1;
  EXPECT_FALSE(TagsEqual(whole, Tag(k, FrameDirection::kToDaemon, 0, frame)));
  frame[4999] ^= 1;
  EXPECT_FALSE(TagsEqual(whole, Tag(k, FrameDirection::kToDaemon, 1, frame)));  // replayed
  EXPECT_FALSE(TagsEqual(whole, Tag(k, FrameDirection::kToClient, 0, frame)));  // reflected
  EXPECT_FALSE(TagsEqual(whole, Tag(Key(2), FrameDirection::kToDaemon, 0, frame)));
}

TEST(FrameMacTest, SealerNumbersFramesInOrder) {
  const SessionKey k = Key(1);
  FrameSealer sealer(k, FrameDirection::kToClient);
  const std::vector<uint8_t> bytes = {1, 2, 3};
  FrameMac first = sealer.Next();
  first.Update(bytes);
  FrameMac second = sealer.Next();
  second.Update(bytes);
  EXPECT_TRUE(TagsEqual(first.Final(), Tag(k, FrameDirection::kToClient, 0, bytes)));
  EXPECT_TRUE(TagsEqual(second.Final(), Tag(k, FrameDirection::kToClient, 1, bytes)));
}

FrameTag SealerTag(const SessionKey& k, TagAlgorithm alg, FrameDirection d, uint64_t seq,
                   std::span<const uint8_t> a, std::span<const uint8_t> b = {}) {
  FrameSealer sealer(k, d, alg);
  for (uint64_t i = 0; i < seq; ++i) sealer.Next();
  FrameMac m = sealer.Next();
  m.Update(a);
  m.Update(b);
  return m.Final();
}

TEST(FrameMacTest, AesGmacIsAesGcmOverTheFrameAsAdditionalData) {
  if (!AesGmacAvailable()) GTEST_SKIP() << "no AES-NI / PCLMUL on this CPU";
  std::vector<uint8_t> frame(24 + 16 + 4096);
  for (size_t i = 0; i < frame.size(); ++i) frame[i] = static_cast<uint8_t>(i * 13);
  const SessionKey k = Key(1);
  const std::span<const uint8_t> all(frame);
  const FrameTag whole = SealerTag(k, TagAlgorithm::kAesGmac, FrameDirection::kToDaemon, 3, all);
  // The reference: libsodium's one-shot AES-256-GCM, key HMAC-SHA256(session key, label),
  // nonce direction | 0 0 0 | frame number (little-endian), no message.
  std::array<uint8_t, 32> gk{};
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, k.data(), k.size());
  const std::string label = "iorelay-frame-aes-gmac-v1";
  crypto_auth_hmacsha256_update(&st, reinterpret_cast<const uint8_t*>(label.data()), label.size());
  crypto_auth_hmacsha256_final(&st, gk.data());
  std::array<uint8_t, 12> nonce{};
  nonce[4] = 3;
  FrameTag reference{};
  unsigned long long len = 0;
  uint8_t none = 0;
  ASSERT_EQ(
      crypto_aead_aes256gcm_encrypt_detached(&none, reference.data(), &len, &none, 0, frame.data(),
                                             frame.size(), nullptr, nonce.data(), gk.data()),
      0);
  EXPECT_TRUE(TagsEqual(whole, reference));
  EXPECT_FALSE(
      TagsEqual(whole, SealerTag(k, TagAlgorithm::kPoly1305, FrameDirection::kToDaemon, 3, all)));
  // Any split, the same tag; a changed byte, number, direction or key, another.
  EXPECT_TRUE(TagsEqual(whole, SealerTag(k, TagAlgorithm::kAesGmac, FrameDirection::kToDaemon, 3,
                                         all.first(24), all.subspan(24))));
  EXPECT_FALSE(
      TagsEqual(whole, SealerTag(k, TagAlgorithm::kAesGmac, FrameDirection::kToDaemon, 2, all)));
  EXPECT_FALSE(
      TagsEqual(whole, SealerTag(k, TagAlgorithm::kAesGmac, FrameDirection::kToClient, 3, all)));
  EXPECT_FALSE(TagsEqual(
      whole, SealerTag(Key(2), TagAlgorithm::kAesGmac, FrameDirection::kToDaemon, 3, all)));
  frame[100] ^= 1;
  EXPECT_FALSE(
      TagsEqual(whole, SealerTag(k, TagAlgorithm::kAesGmac, FrameDirection::kToDaemon, 3, frame)));
}

// Over kGmacMaxFrameBytes the tag is Poly1305's, in whatever pieces the frame comes: the
// first piece alone may fit, the fallback then starts from the frame's first byte.
TEST(FrameMacTest, AesGmacFramesOverTheBoundAreTaggedWithPoly1305) {
  if (!AesGmacAvailable()) GTEST_SKIP() << "no AES-NI / PCLMUL on this CPU";
  const SessionKey k = Key(1);
  for (size_t n : {kGmacMaxFrameBytes, kGmacMaxFrameBytes + 1, 4 * kGmacMaxFrameBytes}) {
    SCOPED_TRACE(n);
    std::vector<uint8_t> frame(n);
    for (size_t i = 0; i < n; ++i) frame[i] = static_cast<uint8_t>(i * 5);
    const std::span<const uint8_t> all(frame);
    const FrameTag poly = Tag(k, FrameDirection::kToClient, 7, all);
    const FrameTag gmac = SealerTag(k, TagAlgorithm::kAesGmac, FrameDirection::kToClient, 7,
                                    all.first(40), all.subspan(40));
    EXPECT_EQ(TagsEqual(gmac, poly), n > kGmacMaxFrameBytes);
    EXPECT_TRUE(
        TagsEqual(gmac, SealerTag(k, TagAlgorithm::kAesGmac, FrameDirection::kToClient, 7, all)));
  }
}

}  // namespace
}  // namespace iorelay
