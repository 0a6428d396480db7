#include "sim/range_tokens.h"

#include <gtest/gtest.h>

namespace iorelay::sim {
namespace {

using Outcome = FileRangeTokens::Outcome;
const int kHosts[2] = {};
const FileRangeTokens::Holder a = &kHosts[0];
const FileRangeTokens::Holder b = &kHosts[1];
constexpr uint64_t kBlock = 1 << 20;

// Writes [offset, offset + length) at once (acquired and released).
Outcome Write(FileRangeTokens& t, FileRangeTokens::Holder h, uint64_t offset, uint64_t length) {
  const Outcome o = t.Acquire(h, offset, length);
  if (o != Outcome::kBlocked) t.Release(h, offset, length);
  return o;
}

// Two hosts writing one region each negotiate once each, then write under their tokens.
TEST(RangeTokensTest, HostsWritingOneRegionEachNegotiateOnce) {
  FileRangeTokens t;
  const uint64_t region = 64 * kBlock;
  EXPECT_EQ(Write(t, a, 0, kBlock), Outcome::kGranted);
  EXPECT_EQ(t.revoked(), 0);  // the first writer takes the whole file from nobody
  EXPECT_EQ(Write(t, b, region, kBlock), Outcome::kGranted);
  EXPECT_EQ(t.revoked(), 1);  // from the write to the end of the file, taken from a
  for (uint64_t k = 1; k < 64; ++k) {
    EXPECT_EQ(Write(t, a, k * kBlock, kBlock), Outcome::kHeld) << k;
    EXPECT_EQ(Write(t, b, region + k * kBlock, kBlock), Outcome::kHeld) << k;
  }
  EXPECT_EQ(t.ranges(), 2u);
}

// Hosts writing interleaved blocks take the rest of the file from each other at every write.
TEST(RangeTokensTest, InterleavedBlocksNegotiateAtEveryWrite) {
  FileRangeTokens t;
  EXPECT_EQ(Write(t, a, 0, kBlock), Outcome::kGranted);
  for (uint64_t k = 1; k < 16; ++k) {
    EXPECT_EQ(Write(t, k % 2 == 1 ? b : a, k * kBlock, kBlock), Outcome::kGranted) << k;
    EXPECT_EQ(t.revoked(), 1) << k;
  }
}

// A write over bytes another host is writing waits for it; a grant stops at the first byte
// another host is writing, so that host keeps its ranges above.
TEST(RangeTokensTest, WritesInProgressBlockAndBoundGrants) {
  FileRangeTokens t;
  ASSERT_EQ(t.Acquire(a, 0, kBlock), Outcome::kGranted);
  EXPECT_EQ(t.Acquire(b, kBlock / 2, kBlock), Outcome::kBlocked);
  t.Release(a, 0, kBlock);
  EXPECT_EQ(Write(t, b, kBlock / 2, kBlock), Outcome::kGranted);

  FileRangeTokens u;
  ASSERT_EQ(Write(u, a, 0, kBlock), Outcome::kGranted);
  ASSERT_EQ(u.Acquire(a, 8 * kBlock, kBlock), Outcome::kHeld);    // a is writing at 8 MiB
  EXPECT_EQ(Write(u, b, 4 * kBlock, kBlock), Outcome::kGranted);  // granted 4 MiB to 8 MiB
  u.Release(a, 8 * kBlock, kBlock);
  EXPECT_EQ(Write(u, a, 12 * kBlock, kBlock), Outcome::kHeld);
  EXPECT_EQ(Write(u, b, 7 * kBlock, kBlock), Outcome::kHeld);
  EXPECT_EQ(Write(u, b, 8 * kBlock, kBlock), Outcome::kGranted);
  EXPECT_EQ(u.ranges(), 2u);  // a below 4 MiB, b from 4 MiB to the end
}

}  // namespace
}  // namespace iorelay::sim
