// The two-phase plan on worked examples: even domains, the Lustre modulo rule cut into
// cb_buffer_size cycles, holes, and bad input.
#include "collective/two_phase.h"

#include <gtest/gtest.h>

#include "collective/test_extents.h"

namespace iorelay::collective {
namespace {

constexpr uint64_t kMiB = 1 << 20;

using fixtures::Contiguous;

TEST(TwoPhase, EvenDomainsGiveEachAggregatorAContiguousHalf) {
  // 4 ranks x 4 MiB, 2 aggregators, one 16 MiB buffer: one cycle, ranks 0-1 to aggregator 0.
  auto plan = PlanTwoPhase(Contiguous(4, 4 * kMiB), {2, 0, 16 * kMiB});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->size(), 1u);
  const Cycle& c = (*plan)[0];
  ASSERT_EQ(c.flows.size(), 4u);
  EXPECT_EQ(c.flows[1].rank, 1);
  EXPECT_EQ(c.flows[1].aggregator, 0);
  EXPECT_EQ(c.flows[2].aggregator, 1);
  ASSERT_EQ(c.writes.size(), 2u);
  EXPECT_EQ(c.writes[0].ranges.size(), 1u);
  EXPECT_EQ(c.writes[0].ranges[0].end, 8 * kMiB);
  EXPECT_EQ(c.writes[1].ranges[0].begin, 8 * kMiB);
}

TEST(TwoPhase, LustreRuleCutIntoCycles) {
  // 4 ranks x 2 MiB, 1 MiB stripes, 2 aggregators, 2 MiB buffers: aggregator 0 owns stripes 0, 2,
  // 4, 6; its first cycle writes stripes 0 and 2 (ranks 0 and 1), its second 4 and 6 (2 and 3).
  auto plan = PlanTwoPhase(Contiguous(4, 2 * kMiB), {2, kMiB, 2 * kMiB});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->size(), 2u);
  const AggregatorWrite& first = (*plan)[0].writes[0];
  EXPECT_EQ(first.aggregator, 0);
  ASSERT_EQ(first.ranges.size(), 2u);  // stripes 0 and 2 are not adjacent
  EXPECT_EQ(first.ranges[1].begin, 2 * kMiB);
  EXPECT_EQ(first.Bytes(), 2 * kMiB);
  const Flow& last = (*plan)[1].flows.back();
  EXPECT_EQ(last.rank, 3);
  EXPECT_EQ(last.aggregator, 1);
  EXPECT_EQ(last.bytes, kMiB);  // rank 3's stripe 7
}

TEST(TwoPhase, HolesCountInTheWindowButAreNotWritten) {
  // Two ranks, 1 MiB each, 2 MiB apart: one aggregator, a 2 MiB window holds rank 0 and the
  // hole; rank 1 falls in the second window.
  auto plan = PlanTwoPhase({{0, 0, kMiB}, {1, 3 * kMiB, kMiB}}, {1, 0, 2 * kMiB});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_EQ((*plan)[0].writes[0].Bytes(), kMiB);
  EXPECT_EQ((*plan)[1].flows[0].rank, 1);
}

TEST(TwoPhase, BadInputIsNamed) {
  EXPECT_NE(PlanTwoPhase(Contiguous(2, kMiB), {0, 0, kMiB}).status().message().find("aggregators"),
            std::string::npos);
  EXPECT_NE(PlanTwoPhase(Contiguous(2, kMiB), {1, 0, 0}).status().message().find("cb_buffer"),
            std::string::npos);
  auto overlap = PlanTwoPhase({{0, 0, 2 * kMiB}, {1, kMiB, kMiB}}, {1, 0, kMiB});
  ASSERT_FALSE(overlap.ok());
  EXPECT_NE(overlap.status().message().find("ranks 0 and 1"), std::string::npos);
  auto none = PlanTwoPhase({{0, 0, 0}}, {1, 0, kMiB});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace iorelay::collective
