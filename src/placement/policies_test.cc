// The route-oblivious and nearest policies: valid, balanced where promised, registry by name.
#include <gtest/gtest.h>

#include <algorithm>

#include "placement/compare.h"
#include "placement/metrics.h"
#include "placement/policy.h"
#include "placement/topology_spec.h"

namespace iorelay::placement {
namespace {

std::vector<int> Loads(const Assignment& a, int k) {
  std::vector<int> load(k, 0);
  for (int32_t b : a) {
    EXPECT_GE(b, 0);
    EXPECT_LT(b, k);
    if (b >= 0 && b < k) ++load[b];
  }
  return load;
}

TEST(PoliciesTest, EveryPolicyGivesAValidAssignment) {
  for (const char* spec : {"torus:4x4x4x4x2", "torus:6x5:order=BA", "fattree:6x10x4",
                           "dragonfly:9x4x4x2", "dragonfly:9x4x4x2:routing=valiant"}) {
    auto t = ParseTopology(spec);
    ASSERT_TRUE(t.ok());
    Result<IoLayout> l = ChooseLayout(**t, 8);
    ASSERT_TRUE(l.ok());
    for (const std::string& p : PolicyNames()) {
      Result<Assignment> a = Assign(p, **t, *l, PolicyOptions{});
      ASSERT_TRUE(a.ok()) << p;
      ASSERT_EQ(static_cast<int>(a->size()), (*t)->num_nodes());
      Loads(*a, l->num_bridges());
    }
  }
}

TEST(PoliciesTest, BlockIsContiguousAndRoundRobinCycles) {
  auto t = ParseTopology("torus:4x4x4x4x2");
  ASSERT_TRUE(t.ok());
  Result<IoLayout> l = ChooseLayout(**t, 64);
  ASSERT_TRUE(l.ok());
  const Assignment block = BlockAssignment(**t, *l);
  EXPECT_TRUE(std::is_sorted(block.begin(), block.end()));
  EXPECT_EQ(Loads(block, 8), std::vector<int>(8, 64));
  const Assignment rr = RoundRobinAssignment(**t, *l);
  for (int v = 0; v < 512; ++v) EXPECT_EQ(rr[v], v % 8);
}

TEST(PoliciesTest, NearestIsBalancedAndCloserThanDefault) {
  for (const char* spec : {"torus:4x4x4x8x2", "torus:7x9", "fattree:8x16x4", "dragonfly:9x4x8x2"}) {
    auto t = ParseTopology(spec);
    ASSERT_TRUE(t.ok());
    Result<IoLayout> l = ChooseLayout(**t, 16);
    ASSERT_TRUE(l.ok());
    const int n = (*t)->num_nodes(), k = l->num_bridges();
    const Assignment a = NearestAssignment(**t, *l);
    const std::vector<int> load = Loads(a, k);
    EXPECT_LE(*std::max_element(load.begin(), load.end()), (n + k - 1) / k) << spec;
    Result<MappingMetrics> near = ComputeMetrics(**t, *l, a, {});
    Result<MappingMetrics> def = ComputeMetrics(**t, *l, l->default_bridge, {});
    ASSERT_TRUE(near.ok() && def.ok());
    EXPECT_LE(near->hops_mean, def->hops_mean) << spec;
  }
}

TEST(PoliciesTest, UnknownPolicyAndBadCap) {
  auto t = ParseTopology("torus:4x4");
  ASSERT_TRUE(t.ok());
  Result<IoLayout> l = ChooseLayout(**t, 4);
  ASSERT_TRUE(l.ok());
  EXPECT_FALSE(Assign("closest", **t, *l, {}).ok());
  EXPECT_FALSE(Assign("route-aware", **t, *l, PolicyOptions{0}).ok());
}

}  // namespace
}  // namespace iorelay::placement
