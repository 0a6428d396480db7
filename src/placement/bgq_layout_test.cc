// The Blue Gene/Q layout model: 8 bridge nodes per midplane at fixed positions, equal shares.
#include "placement/bgq_layout.h"

#include <gtest/gtest.h>

namespace iorelay::placement {
namespace {

TEST(BgqLayoutTest, MidplaneHasEightBridgesWithEqualShares) {
  Result<Torus> t = Torus::Make({4, 4, 4, 4, 2});
  ASSERT_TRUE(t.ok());
  Result<IoLayout> l = MakeBgqLayout(*t);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->num_bridges(), 8);
  EXPECT_EQ(l->num_ionodes, 4);
  EXPECT_EQ(l->bridges[0], t->NodeAt({0, 0, 0, 0, 0}));
  EXPECT_EQ(l->bridges[1], t->NodeAt({0, 0, 2, 0, 1}));
  EXPECT_EQ(l->bridges[7], t->NodeAt({2, 2, 2, 0, 1}));
  EXPECT_EQ(l->ionode_of_bridge, std::vector<int32_t>({0, 0, 1, 1, 2, 2, 3, 3}));
  std::vector<int> share(8, 0);
  for (int32_t b : l->default_bridge) ++share[b];
  EXPECT_EQ(share, std::vector<int>(8, 64));
  EXPECT_EQ(l->default_bridge[63], 0);
  EXPECT_EQ(l->default_bridge[64], 1);
}

TEST(BgqLayoutTest, MiraShapesAreMidplaneMultiples) {
  for (int nodes : MiraPartitionSizes()) {
    Result<std::vector<int>> shape = MiraPartitionShape(nodes);
    ASSERT_TRUE(shape.ok());
    Result<Torus> t = Torus::Make(*shape);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->num_nodes(), nodes);
    Result<IoLayout> l = MakeBgqLayout(*t);
    ASSERT_TRUE(l.ok());
    EXPECT_EQ(l->num_bridges(), nodes / 64);
    EXPECT_EQ(l->num_ionodes, nodes / 128);
  }
  EXPECT_FALSE(MiraPartitionShape(1000).ok());
}

TEST(BgqLayoutTest, RejectsNonMidplaneShapes) {
  Result<Torus> t = Torus::Make({4, 4, 4, 2, 2});
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(MakeBgqLayout(*t).ok());
  Result<Torus> t3 = Torus::Make({8, 8, 8});
  ASSERT_TRUE(t3.ok());
  EXPECT_FALSE(MakeBgqLayout(*t3).ok());
}

TEST(SpreadLayoutTest, BridgeIsFirstNodeOfItsBlock) {
  Result<Torus> t = Torus::Make({10});
  ASSERT_TRUE(t.ok());
  Result<IoLayout> l = MakeSpreadLayout(*t, 4);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->num_bridges(), 3);
  EXPECT_EQ(l->num_ionodes, 2);
  for (int32_t b = 0; b < 3; ++b) EXPECT_EQ(l->default_bridge[l->bridges[b]], b);
  EXPECT_FALSE(MakeSpreadLayout(*t, 0).ok());
}

}  // namespace
}  // namespace iorelay::placement
