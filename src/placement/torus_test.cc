// Torus routing: every route is as long as the torus distance, follows the dimension order,
// takes the shorter way round each ring and breaks half-ring ties by coordinate parity.
#include "placement/torus.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace iorelay::placement {
namespace {

int TorusDistance(const Torus& t, VertexId a, VertexId b) {
  int d = 0;
  for (int i = 0; i < t.ndims(); ++i) {
    const int n = t.dims()[i];
    const int f = ((t.Coord(b, i) - t.Coord(a, i)) % n + n) % n;
    d += std::min(f, n - f);
  }
  return d;
}

// Checks one route: connected, right length, dims in routing order, one direction per dim.
void CheckRoute(const Torus& t, VertexId a, VertexId b) {
  std::vector<LinkId> links;
  t.Route(a, b, &links);
  ASSERT_EQ(static_cast<int>(links.size()), TorusDistance(t, a, b)) << a << "->" << b;
  ASSERT_EQ(t.Hops(a, b), static_cast<int>(links.size()));
  VertexId at = a;
  int last_pos = -1;
  int last_dim = -1, last_sign = 0;
  for (LinkId l : links) {
    const auto [tail, head] = t.LinkEnds(l);
    ASSERT_EQ(tail, at);
    const int dim = (l % (2 * t.ndims())) / 2;
    const int sign = l % 2 == 0 ? +1 : -1;
    int pos = 0;
    while (t.order()[pos] != dim) ++pos;
    ASSERT_GE(pos, last_pos) << "dimension order violated";
    if (dim == last_dim) {
      ASSERT_EQ(sign, last_sign) << "direction changed within a dimension";
    }
    if (dim != last_dim) {
      const int n = t.dims()[dim];
      const int f = ((t.Coord(b, dim) - t.Coord(at, dim)) % n + n) % n;
      if (2 * f == n) {
        ASSERT_EQ(sign, t.Coord(at, dim) % 2 == 0 ? +1 : -1) << "half-ring tie";
      }
    }
    last_pos = pos;
    last_dim = dim;
    last_sign = sign;
    at = head;
  }
  ASSERT_EQ(at, b);
  if (a != b) {
    ASSERT_EQ(t.NextHop(a, b), t.LinkEnds(links.front()).second);
  }
}

TEST(TorusTest, CoordinatesRoundTrip) {
  Result<Torus> t = Torus::Make({4, 4, 4, 4, 2});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->num_nodes(), 512);
  EXPECT_EQ(t->num_links(), 5120);
  for (VertexId v = 0; v < t->num_nodes(); ++v) EXPECT_EQ(t->NodeAt(t->Coords(v)), v);
  EXPECT_EQ(t->NodeAt({1, 2, 3, 0, 1}), (((1 * 4 + 2) * 4 + 3) * 4 + 0) * 2 + 1);
  EXPECT_EQ(t->spec(), "torus:4x4x4x4x2:order=ABCDE");
}

TEST(TorusTest, EveryRouteOnAMidplaneIsShortestAndOrdered) {
  Result<Torus> t = Torus::Make({4, 4, 4, 4, 2});
  ASSERT_TRUE(t.ok());
  for (VertexId a = 0; a < t->num_nodes(); ++a) {
    for (VertexId b = 0; b < t->num_nodes(); ++b) CheckRoute(*t, a, b);
  }
}

TEST(TorusTest, ConfigurableOrderAndOddRings) {
  Result<Torus> t = Torus::Make({3, 5, 2, 1, 6}, {4, 2, 0, 3, 1});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->spec(), "torus:3x5x2x1x6:order=ECADB");
  for (VertexId a = 0; a < t->num_nodes(); ++a) {
    for (VertexId b = 0; b < t->num_nodes(); ++b) CheckRoute(*t, a, b);
  }
}

TEST(TorusTest, HalfRingTieEvenGoesPlusOddGoesMinus) {
  Result<Torus> t = Torus::Make({8});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->RingSteps(0, 2, 6), +4);
  EXPECT_EQ(t->RingSteps(0, 3, 7), -4);
  EXPECT_EQ(t->RingSteps(0, 1, 2), +1);
  EXPECT_EQ(t->RingSteps(0, 1, 7), -2);
  EXPECT_EQ(t->NextHop(3, 7), 2);
  EXPECT_EQ(t->NextHop(2, 6), 3);
}

TEST(TorusTest, NeighborsAreDistinct) {
  Result<Torus> t = Torus::Make({4, 2, 1, 3});
  ASSERT_TRUE(t.ok());
  std::vector<VertexId> n;
  t->Neighbors(0, &n);
  EXPECT_EQ(n.size(), 2u + 1u + 0u + 2u);
}

TEST(TorusTest, RejectsBadShapesAndOrders) {
  EXPECT_FALSE(Torus::Make({}).ok());
  EXPECT_FALSE(Torus::Make({4, 0}).ok());
  EXPECT_FALSE(Torus::Make({4, 4}, {0, 0}).ok());
  EXPECT_FALSE(Torus::Make({4, 4}, {0}).ok());
  EXPECT_FALSE(Torus::Make({1 << 16, 1 << 16}).ok());
}

}  // namespace
}  // namespace iorelay::placement
