// Frame tags: the same bytes in any split give the same tag; a changed byte, another frame
// number, another direction or another session key give another.
#include "common/frame_mac.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace iorelay
