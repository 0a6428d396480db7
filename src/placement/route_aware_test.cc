// The route-aware policy: balanced (no bridge node above ceil(N/K) compute nodes when the trees
// reach every node) and, on 512 and 8,192 nodes, better than the default model on mean hops,
// max messages per link and bridge-transit messages.
#include <gtest/gtest.h>

#include <algorithm>

#include "placement/bgq_layout.h"
#include "placement/metrics.h"
#include "placement/policy.h"
#include "placement/topology_spec.h"

namespace iorelay::placement {
namespace {

struct Outcome {
  RouteAwareStats stats;
  int max_load = 0;
  int bound = 0;  // ceil(N/K)
  MappingMetrics route_aware, default_model;
};

Outcome RunBoth(const Topology& t, const IoLayout& l, int cap = 256,
                Unreached rule = Unreached::kDefaultBridge) {
  Outcome o;
  const Assignment a = RouteAwareAssignment(t, l, PolicyOptions{cap, rule}, &o.stats);
  std::vector<int> load(l.num_bridges(), 0);
  for (int32_t b : a) ++load[b];
  o.max_load = *std::max_element(load.begin(), load.end());
  o.bound = (t.num_nodes() + l.num_bridges() - 1) / l.num_bridges();
  o.route_aware = *ComputeMetrics(t, l, a, {16, false});
  o.default_model = *ComputeMetrics(t, l, l.default_bridge, {16, false});
  return o;
}

// The bound: the traversal never lets a bridge exceed ceil(N/K) nodes (it takes a node only
// while its load <= the average, and the average is below N/K); each unreached node adds at
// most one node to one bridge. Hence max load <= ceil(N/K) + unreached, and exactly ceil(N/K)
// with Unreached::kNearestUnderShare.
void ExpectBetterThanDefault(const Outcome& o) {
  EXPECT_LE(o.max_load, o.bound + o.stats.unreached);
  EXPECT_LT(o.route_aware.hops_mean, o.default_model.hops_mean);
  EXPECT_LT(o.route_aware.link_messages.max, o.default_model.link_messages.max);
  EXPECT_LT(o.route_aware.bridge_transit_messages, o.default_model.bridge_transit_messages);
}

TEST(RouteAwareTest, BeatsDefaultOn512Nodes) {
  Result<Torus> t = Torus::Make(*MiraPartitionShape(512));
  ASSERT_TRUE(t.ok());
  ExpectBetterThanDefault(RunBoth(*t, *MakeBgqLayout(*t)));
}

TEST(RouteAwareTest, BeatsDefaultOn8192Nodes) {
  Result<Torus> t = Torus::Make(*MiraPartitionShape(8192));
  ASSERT_TRUE(t.ok());
  ExpectBetterThanDefault(RunBoth(*t, *MakeBgqLayout(*t)));
}

TEST(RouteAwareTest, NearestUnderShareIsStrictlyBalancedAndStillBetter) {
  for (int nodes : {512, 8192}) {
    Result<Torus> t = Torus::Make(*MiraPartitionShape(nodes));
    ASSERT_TRUE(t.ok());
    const Outcome o = RunBoth(*t, *MakeBgqLayout(*t), 256, Unreached::kNearestUnderShare);
    EXPECT_LE(o.max_load, o.bound) << nodes;
    ExpectBetterThanDefault(o);
  }
}

TEST(RouteAwareTest, BalancedOnEveryMiraPartitionAndOrder) {
  for (int nodes : {512, 1024, 2048, 4096}) {
    for (std::vector<int> order : {std::vector<int>{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}}) {
      Result<Torus> t = Torus::Make(*MiraPartitionShape(nodes), order);
      ASSERT_TRUE(t.ok());
      const Outcome o = RunBoth(*t, *MakeBgqLayout(*t));
      EXPECT_EQ(o.stats.reached + o.stats.unreached, nodes);
      EXPECT_LE(o.max_load, o.bound + o.stats.unreached) << nodes;
      const Outcome strict = RunBoth(*t, *MakeBgqLayout(*t), 256, Unreached::kNearestUnderShare);
      EXPECT_LE(strict.max_load, strict.bound) << nodes;
      // With a cap of N every node is in every tree: the traversal alone is balanced.
      const Outcome full = RunBoth(*t, *MakeBgqLayout(*t), nodes);
      EXPECT_EQ(full.stats.unreached, 0) << nodes;
      EXPECT_LE(full.max_load, full.bound) << nodes;
    }
  }
}

TEST(RouteAwareTest, SmallCapLeavesNodesOnTheirDefault) {
  Result<Torus> t = Torus::Make({4, 4, 4, 4, 2});
  ASSERT_TRUE(t.ok());
  const IoLayout l = *MakeBgqLayout(*t);
  RouteAwareStats stats;
  const Assignment a = RouteAwareAssignment(*t, l, PolicyOptions{8}, &stats);
  EXPECT_GT(stats.unreached, 0);
  EXPECT_EQ(stats.reached + stats.unreached, 512);
  int kept = 0;
  for (int v = 0; v < 512; ++v) kept += a[v] == l.default_bridge[v];
  EXPECT_GE(kept, stats.unreached);
}

TEST(RouteAwareTest, WorksOnFatTreeAndDragonfly) {
  for (const char* spec : {"fattree:8x16x4", "dragonfly:9x4x8x2"}) {
    auto t = ParseTopology(spec);
    ASSERT_TRUE(t.ok());
    const IoLayout l = *MakeSpreadLayout(**t, 16);
    const Outcome o = RunBoth(**t, l, 64);
    EXPECT_LE(o.max_load, o.bound + o.stats.unreached) << spec;
    EXPECT_LE(o.route_aware.hops_mean, o.default_model.hops_mean) << spec;
  }
}

}  // namespace
}  // namespace iorelay::placement
