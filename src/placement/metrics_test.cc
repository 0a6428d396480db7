// Metrics on hand-checked rings: hops, messages per link, bridge transits, loads, aggregation.
#include "placement/metrics.h"

#include <gtest/gtest.h>

#include "placement/torus.h"

namespace iorelay::placement {
namespace {

TEST(MetricsTest, RingWithOneBridge) {
  Result<Torus> t = Torus::Make({4});
  ASSERT_TRUE(t.ok());
  Result<IoLayout> l = MakeSpreadLayout(*t, 4);
  ASSERT_TRUE(l.ok());
  // 1 -> 0 takes (1,-); 2 -> 0 is half the ring from an even coordinate: 2 -> 3 -> 0; 3 -> 0.
  std::vector<int64_t> links;
  Result<MappingMetrics> m = ComputeMetrics(*t, *l, {0, 0, 0, 0}, {1, false}, &links);
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ(m->hops_mean, 1.0);
  EXPECT_EQ(m->hops_max, 2);
  EXPECT_EQ(m->links_used, 3);
  EXPECT_EQ(m->link_messages.max, 2);
  EXPECT_EQ(links[3 * 2 + 0], 2);  // (3,+)
  EXPECT_EQ(links[2 * 2 + 0], 1);  // (2,+)
  EXPECT_EQ(links[1 * 2 + 1], 1);  // (1,-)
  EXPECT_EQ(m->bridge_transit_messages, 0);
  EXPECT_EQ(m->bridge_load.max, 4);

  Result<MappingMetrics> ranks = ComputeMetrics(*t, *l, {0, 0, 0, 0}, {16, false});
  ASSERT_TRUE(ranks.ok());
  EXPECT_EQ(ranks->messages, 64);
  EXPECT_EQ(ranks->link_messages.max, 32);
  EXPECT_DOUBLE_EQ(ranks->link_messages.cv, m->link_messages.cv);
  Result<MappingMetrics> agg = ComputeMetrics(*t, *l, {0, 0, 0, 0}, {16, true});
  ASSERT_TRUE(agg.ok());
  EXPECT_EQ(agg->link_messages.max, 2);
}

TEST(MetricsTest, CountsMessagesThroughAnotherBridge) {
  Result<Torus> t = Torus::Make({12});
  ASSERT_TRUE(t.ok());
  Result<IoLayout> l = MakeSpreadLayout(*t, 3);  // bridges at 0, 3, 6, 9
  ASSERT_TRUE(l.ok());
  Assignment a = l->default_bridge;
  a[1] = 2;  // 1 -> 6 goes +: 1 -> 2 -> 3 (a bridge) -> 4 -> 5 -> 6
  Result<MappingMetrics> m = ComputeMetrics(*t, *l, a, {2, false});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->bridge_transit_messages, 2);
  EXPECT_EQ(m->bridge_transits, 2);
  EXPECT_EQ(m->hops_max, 5);
  EXPECT_EQ(m->bridge_load.max, 4);
  EXPECT_EQ(m->bridge_load.min, 2);
  EXPECT_EQ(m->ionode_load.max, 7);
  EXPECT_EQ(m->ionode_load.min, 5);
}

TEST(MetricsTest, RejectsBadInput) {
  Result<Torus> t = Torus::Make({4});
  ASSERT_TRUE(t.ok());
  Result<IoLayout> l = MakeSpreadLayout(*t, 4);
  ASSERT_TRUE(l.ok());
  EXPECT_FALSE(ComputeMetrics(*t, *l, {0, 0, 0}, {}).ok());
  EXPECT_FALSE(ComputeMetrics(*t, *l, {0, 0, 0, 1}, {}).ok());
  EXPECT_FALSE(ComputeMetrics(*t, *l, {0, 0, 0, 0}, {0, false}).ok());
}

TEST(MetricsTest, SpreadOf) {
  const Spread s = SpreadOf({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.cv, 2.0 / 5.0);
  EXPECT_EQ(s.max, 9);
  EXPECT_EQ(s.min, 2);
  EXPECT_EQ(SpreadOf({}).max, 0);
}

}  // namespace
}  // namespace iorelay::placement
