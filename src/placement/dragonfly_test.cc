// Dragonfly: link numbering is a bijection, minimal routes take at most local-global-local
// router hops and are destination-based, Valiant routes pass through a third group.
#include "placement/dragonfly.h"

#include <gtest/gtest.h>

#include <set>

namespace iorelay::placement {
namespace {

// Walks `links` from `from` and checks each link starts where the previous one ended.
VertexId Walk(const Topology& t, VertexId from, const std::vector<LinkId>& links) {
  VertexId at = from;
  for (LinkId l : links) {
    EXPECT_GE(l, 0);
    EXPECT_LT(l, t.num_links());
    EXPECT_EQ(t.LinkEnds(l).first, at);
    at = t.LinkEnds(l).second;
  }
  return at;
}

TEST(DragonflyTest, EveryLinkIsDistinctAndJoinsNeighbors) {
  // 5 groups of 3 routers with 2 global ports each: 6 ports for 4 peer groups.
  Result<Dragonfly> t = Dragonfly::Make(5, 3, 2, 2);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->num_nodes(), 30);
  EXPECT_EQ(t->num_vertices(), 45);
  EXPECT_EQ(t->num_links(), 2 * 30 + 5 * 3 * 2 + 5 * 4);
  std::set<std::pair<VertexId, VertexId>> ends;
  std::vector<VertexId> neighbors;
  for (LinkId l = 0; l < t->num_links(); ++l) {
    auto e = t->LinkEnds(l);
    EXPECT_TRUE(ends.insert(e).second) << "two links " << t->LinkName(l);
    t->Neighbors(e.first, &neighbors);
    EXPECT_NE(std::find(neighbors.begin(), neighbors.end(), e.second), neighbors.end())
        << t->LinkName(l);
  }
  // Every neighbor relation has its link: degree sums match the link count.
  size_t degree = 0;
  for (VertexId v = 0; v < t->num_vertices(); ++v) {
    t->Neighbors(v, &neighbors);
    degree += neighbors.size();
  }
  EXPECT_EQ(degree, static_cast<size_t>(t->num_links()));
  EXPECT_EQ(t->LinkName(0), "n0>g0r0");
}

TEST(DragonflyTest, MinimalRoutesAreShortAndDestinationBased) {
  Result<Dragonfly> t = Dragonfly::Make(9, 4, 2, 2);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->spec(), "dragonfly:9x4x2x2");
  const int n = t->num_nodes();
  for (VertexId a = 0; a < n; ++a) {
    for (VertexId b = 0; b < n; ++b) {
      std::vector<LinkId> links;
      t->Route(a, b, &links);
      ASSERT_EQ(Walk(*t, a, links), b);
      ASSERT_EQ(t->Hops(a, b), static_cast<int>(links.size()));
      int expect;
      if (a == b) {
        expect = 0;
      } else if (a / 2 == b / 2) {
        expect = 2;  // same router
      } else if (t->GroupOf(a) == t->GroupOf(b)) {
        expect = 3;  // one local hop
      } else {
        expect = -1;  // 3 to 5: a global hop plus 0-2 local hops
      }
      if (expect >= 0) {
        ASSERT_EQ(static_cast<int>(links.size()), expect) << a << "->" << b;
      } else {
        ASSERT_GE(links.size(), 3u);
        ASSERT_LE(links.size(), 5u);
      }
      if (a != b) {
        // The route from the next hop is the rest of this route.
        std::vector<LinkId> rest;
        t->Route(t->NextHop(a, b), b, &rest);
        ASSERT_EQ(rest, std::vector<LinkId>(links.begin() + 1, links.end()));
      }
    }
  }
}

TEST(DragonflyTest, ValiantGoesThroughAThirdGroup) {
  Result<Dragonfly> t = Dragonfly::Make(9, 4, 2, 2, DragonflyRouting::kValiant);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->spec(), "dragonfly:9x4x2x2:routing=valiant");
  const int n = t->num_nodes();
  std::set<int> used;
  for (VertexId a = 0; a < n; ++a) {
    for (VertexId b = 0; b < n; ++b) {
      std::vector<LinkId> links;
      t->Route(a, b, &links);
      ASSERT_EQ(Walk(*t, a, links), b);
      const int via = t->IntermediateGroup(a, b);
      if (t->GroupOf(a) == t->GroupOf(b)) {
        ASSERT_EQ(via, -1);
        continue;
      }
      ASSERT_NE(via, t->GroupOf(a));
      ASSERT_NE(via, t->GroupOf(b));
      used.insert(via);
      bool visits = false;
      for (LinkId l : links) visits |= t->GroupOf(t->LinkEnds(l).second) == via;
      ASSERT_TRUE(visits) << a << "->" << b << " misses group " << via;
      ASSERT_LE(links.size(),
                8u);  // up, <=2 local + global to via, <=1 local + global, local, down
      ASSERT_EQ(t->Hops(a, b), static_cast<int>(links.size()));
    }
  }
  EXPECT_EQ(used.size(), 9u) << "intermediate groups spread over all groups";
}

TEST(DragonflyTest, RejectsTooFewGlobalPorts) {
  Result<Dragonfly> t = Dragonfly::Make(10, 4, 2, 2);  // 9 peers, 8 ports
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("global links"), std::string::npos);
  EXPECT_TRUE(Dragonfly::Make(1, 1, 1, 1).ok());
}

}  // namespace
}  // namespace iorelay::placement
