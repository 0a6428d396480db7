// Fat tree routing: two hops inside a leaf, four across, up through spine (destination mod k).
#include "placement/fattree.h"

#include <gtest/gtest.h>

namespace iorelay::placement {
namespace {

TEST(FatTreeTest, RoutesUseDestinationModKUplinks) {
  Result<FatTree> t = FatTree::Make(4, 8, 3);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->num_nodes(), 32);
  EXPECT_EQ(t->num_vertices(), 32 + 4 + 3);
  EXPECT_EQ(t->spec(), "fattree:4x8x3");
  for (VertexId a = 0; a < 32; ++a) {
    for (VertexId b = 0; b < 32; ++b) {
      std::vector<LinkId> links;
      t->Route(a, b, &links);
      const int expect = a == b ? 0 : (a / 8 == b / 8 ? 2 : 4);
      ASSERT_EQ(static_cast<int>(links.size()), expect);
      ASSERT_EQ(t->Hops(a, b), expect);
      VertexId at = a;
      for (LinkId l : links) {
        ASSERT_GE(l, 0);
        ASSERT_LT(l, t->num_links());
        ASSERT_EQ(t->LinkEnds(l).first, at);
        at = t->LinkEnds(l).second;
      }
      ASSERT_EQ(at, b);
      if (expect == 4) {
        EXPECT_EQ(t->LinkEnds(links[1]).second, 32 + 4 + b % 3) << "up-link is dest mod k";
      }
    }
  }
}

TEST(FatTreeTest, NeighborsAndNames) {
  Result<FatTree> t = FatTree::Make(2, 2, 2);
  ASSERT_TRUE(t.ok());
  std::vector<VertexId> n;
  t->Neighbors(0, &n);
  EXPECT_EQ(n, std::vector<VertexId>({4}));
  t->Neighbors(4, &n);
  EXPECT_EQ(n, std::vector<VertexId>({0, 1, 6, 7}));
  EXPECT_EQ(t->LinkName(0), "n0>leaf0");
  EXPECT_FALSE(FatTree::Make(0, 2, 2).ok());
}

}  // namespace
}  // namespace iorelay::placement
