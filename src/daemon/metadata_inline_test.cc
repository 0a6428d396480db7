// Where metadata requests run: on the pool until the file system has been measured quick, on
// the loop while it stays quick, never for the ops whose work grows with the data.
#include "daemon/metadata_inline.h"

#include <gtest/gtest.h>

namespace iorelay::daemon {
namespace {

using proto::Op;

TEST(MetadataInline, PoolFirstThenTheLoopWhileQuick) {
  MetadataInline rule(50'000);
  EXPECT_FALSE(rule.RunOnLoop(Op::kStat));  // not measured yet
  for (int i = 0; i < 40; ++i) rule.Record(Op::kStat, 5'000);
  EXPECT_TRUE(rule.RunOnLoop(Op::kStat));
  EXPECT_TRUE(rule.RunOnLoop(Op::kOpen));
  EXPECT_FALSE(rule.RunOnLoop(Op::kFsync));
  EXPECT_FALSE(rule.RunOnLoop(Op::kReaddir));
  EXPECT_FALSE(rule.RunOnLoop(Op::kFtruncate));
  EXPECT_FALSE(rule.RunOnLoop(Op::kStats));  // its reply grows with the files served
  // Ops that never run on a loop do not move the mean: a long fsync says nothing of an open.
  rule.Record(Op::kFsync, 400'000'000);
  rule.Record(Op::kStats, 400'000'000);
  EXPECT_TRUE(rule.RunOnLoop(Op::kOpen));
  // One call of 400 ms (a hung server answering at last) sends the next ones to the pool, and
  // they come back only after enough quick ones.
  rule.Record(Op::kStat, 400'000'000);
  EXPECT_FALSE(rule.RunOnLoop(Op::kStat));
  int quick = 0;
  while (!rule.RunOnLoop(Op::kStat) && quick < 1000) {
    rule.Record(Op::kStat, 5'000);
    ++quick;
  }
  EXPECT_GT(quick, 30);
  EXPECT_LT(quick, 1000);
}

TEST(MetadataInline, BoundZeroAlwaysUsesThePool) {
  MetadataInline rule(0);
  for (int i = 0; i < 40; ++i) rule.Record(Op::kStat, 0);
  EXPECT_FALSE(rule.RunOnLoop(Op::kStat));
}

}  // namespace
}  // namespace iorelay::daemon
