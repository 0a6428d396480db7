// Connectivity trees: every tree path is the default route, depth is the hop count, the cap
// holds, and an uncapped tree holds every node.
#include "placement/connectivity_tree.h"

#include <gtest/gtest.h>

#include <unordered_map>

#include "placement/topology_spec.h"

namespace iorelay::placement {
namespace {

void CheckTree(const Topology& t, VertexId root, int cap) {
  ConnectivityTree tree;
  std::vector<VertexId> queue, neighbors;
  BuildConnectivityTree(t, root, cap, &tree, &queue, &neighbors);
  ASSERT_LE(static_cast<int>(tree.nodes.size()), cap);
  ASSERT_EQ(tree.nodes.front(), root);
  std::unordered_map<VertexId, int> depth;
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    ASSERT_TRUE(depth.emplace(tree.nodes[i], tree.depth[i]).second) << "duplicate node";
    if (i > 0) {
      ASSERT_GE(tree.depth[i], tree.depth[i - 1]) << "not breadth-first";
    }
  }
  for (size_t i = 1; i < tree.nodes.size(); ++i) {
    const VertexId v = tree.nodes[i];
    // The tree path from v to root is v's default route: walk it and count the hops.
    ASSERT_EQ(tree.depth[i], t.Hops(v, root));
    VertexId at = t.NextHop(v, root);
    int hops = 1;
    for (; at >= t.num_nodes(); ++hops) at = t.NextHop(at, root);  // switches
    ASSERT_TRUE(depth.count(at)) << "tree parent of " << v << " missing";
    ASSERT_EQ(depth[at], tree.depth[i] - hops);
  }
}

TEST(ConnectivityTreeTest, TorusTreesFollowDefaultRoutes) {
  auto t = ParseTopology("torus:4x4x4x4x2");
  ASSERT_TRUE(t.ok());
  for (VertexId root : {0, 17, 511}) {
    CheckTree(**t, root, 256);
    CheckTree(**t, root, 7);
  }
  ConnectivityTree all;
  std::vector<VertexId> q, n;
  BuildConnectivityTree(**t, 5, 1 << 20, &all, &q, &n);
  EXPECT_EQ(all.nodes.size(), 512u) << "every route is a chain of nodes, so all are reached";
}

TEST(ConnectivityTreeTest, OtherOrdersFatTreeAndDragonfly) {
  for (const char* spec : {"torus:3x5x4:order=CAB", "fattree:4x8x3", "dragonfly:9x4x2x2"}) {
    auto t = ParseTopology(spec);
    ASSERT_TRUE(t.ok());
    CheckTree(**t, 0, 1000);
    CheckTree(**t, 9, 10);
    ConnectivityTree all;
    std::vector<VertexId> q, n;
    BuildConnectivityTree(**t, 9, 1 << 20, &all, &q, &n);
    EXPECT_EQ(static_cast<int>(all.nodes.size()), (*t)->num_nodes()) << spec;
  }
}

}  // namespace
}  // namespace iorelay::placement
