// Random MPI file views (1D strided vectors and 2D subarray tiles) turned into the ranks' extents,
// and every collective rule checked on them against a brute-force model that walks the file byte
// by byte (or the ranks one by one): ROMIO's default of one aggregator per host and cb_nodes, the
// stripe alignment of the count, even and Lustre domains with their cycles, and split/merge.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "collective/aggregators.h"
#include "collective/split_merge.h"
#include "collective/two_phase.h"

namespace iorelay::collective {
namespace {

struct View {
  int32_t ranks = 1;
  std::vector<RankExtent> extents;  // several per rank
};

// MPI_Type_vector views: rank r sees `count` blocks of `block` bytes every `stride` bytes from
// displacement r * block (stride >= ranks * block; larger leaves holes).
View StridedView(std::mt19937_64& rng) {
  View v;
  v.ranks = 1 + static_cast<int32_t>(rng() % 8);
  const uint64_t block = 1 + rng() % 300;
  const uint64_t count = 1 + rng() % 10;
  const uint64_t stride = v.ranks * block + (rng() % 2 == 0 ? 0 : rng() % 200);
  for (int32_t r = 0; r < v.ranks; ++r) {
    for (uint64_t i = 0; i < count; ++i) v.extents.push_back({r, r * block + i * stride, block});
  }
  return v;
}

// MPI_Type_create_subarray views: a rows x cols array of `elem`-byte elements in row-major order,
// ranks in a pr x pc grid, each owning one tile; a tile's rows are its extents.
View SubarrayView(std::mt19937_64& rng) {
  View v;
  const uint64_t pr = 1 + rng() % 3, pc = 1 + rng() % 3;
  const uint64_t tile_rows = 1 + rng() % 6, tile_cols = 1 + rng() % 20, elem = 1 + rng() % 8;
  const uint64_t cols = pc * tile_cols;
  v.ranks = static_cast<int32_t>(pr * pc);
  for (uint64_t i = 0; i < pr; ++i) {
    for (uint64_t j = 0; j < pc; ++j) {
      const auto rank = static_cast<int32_t>(i * pc + j);
      for (uint64_t row = i * tile_rows; row < (i + 1) * tile_rows; ++row) {
        v.extents.push_back({rank, (row * cols + j * tile_cols) * elem, tile_cols * elem});
      }
    }
  }
  return v;
}

// Brute force: the owner of every byte, the aggregator the rule gives it, its place in that
// aggregator's domain (a running count) and so its cycle; the plan must move and write exactly
// those bytes.
void CheckPlanByBytes(const View& v, const TwoPhaseSpec& spec) {
  std::map<uint64_t, int32_t> owner;  // byte -> rank
  for (const RankExtent& e : v.extents) {
    for (uint64_t o = e.offset; o < e.offset + e.bytes; ++o) owner[o] = e.rank;
  }
  const uint64_t begin = owner.begin()->first, end = owner.rbegin()->first + 1;
  const uint64_t a = static_cast<uint64_t>(spec.aggregators);
  const uint64_t each = (end - begin + a - 1) / a;
  std::vector<uint64_t> position(a, 0);
  std::map<std::tuple<size_t, int32_t, int32_t>, uint64_t> want_flows;  // cycle, agg, rank
  std::set<std::tuple<size_t, int32_t, uint64_t>> want_bytes;           // cycle, agg, byte
  for (uint64_t o = begin; o < end; ++o) {
    const uint64_t agg =
        spec.stripe_size_bytes > 0 ? o / spec.stripe_size_bytes % a : (o - begin) / each;
    const size_t cycle = position[agg]++ / spec.cb_buffer_bytes;
    auto it = owner.find(o);
    if (it == owner.end()) continue;  // a hole: counted in the window, not moved
    ++want_flows[{cycle, static_cast<int32_t>(agg), it->second}];
    want_bytes.insert({cycle, static_cast<int32_t>(agg), o});
  }
  auto plan = PlanTwoPhase(v.extents, spec);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::map<std::tuple<size_t, int32_t, int32_t>, uint64_t> got_flows;
  std::set<std::tuple<size_t, int32_t, uint64_t>> got_bytes;
  for (size_t c = 0; c < plan->size(); ++c) {
    for (const Flow& f : (*plan)[c].flows) got_flows[{c, f.aggregator, f.rank}] += f.bytes;
    for (const AggregatorWrite& w : (*plan)[c].writes) {
      for (size_t i = 0; i < w.ranges.size(); ++i) {
        if (i > 0) {
          EXPECT_LT(w.ranges[i - 1].end, w.ranges[i].begin) << "unjoined or unordered";
        }
        for (uint64_t o = w.ranges[i].begin; o < w.ranges[i].end; ++o) {
          got_bytes.insert({c, w.aggregator, o});
        }
      }
    }
  }
  EXPECT_EQ(got_flows, want_flows);
  EXPECT_EQ(got_bytes, want_bytes);
}

TEST(RandomViews, TwoPhasePlansMatchTheByteModel) {
  std::mt19937_64 rng(5151);
  for (int trial = 0; trial < 60; ++trial) {
    const View v = trial % 2 == 0 ? StridedView(rng) : SubarrayView(rng);
    TwoPhaseSpec spec;
    spec.aggregators = 1 + static_cast<int32_t>(rng() % 6);
    spec.stripe_size_bytes = rng() % 2 == 0 ? 0 : 1 + rng() % 128;  // even domains or Lustre
    spec.cb_buffer_bytes = 1 + rng() % 512;
    SCOPED_TRACE(testing::Message()
                 << "trial " << trial << ", " << v.ranks << " ranks, A " << spec.aggregators
                 << ", S " << spec.stripe_size_bytes << ", cb " << spec.cb_buffer_bytes);
    CheckPlanByBytes(v, spec);
  }
}

// Brute force for the count (no k): start from cb_nodes or the node count, then lower it one by
// one until every cap and the stripe alignment hold; the ranks: the aggregators fill the least
// loaded node with a free rank (lowest node on ties) when there are more than nodes, or take
// nodes floor(i * nodes / A) otherwise.
TEST(RandomViews, RomioCountAndPlacementMatchTheBruteForceModel) {
  std::mt19937_64 rng(51);
  for (int trial = 0; trial < 60; ++trial) {
    const View v = trial % 2 == 0 ? StridedView(rng) : SubarrayView(rng);
    JobShape job;
    job.ranks = v.ranks;
    job.ranks_per_node = 1 + static_cast<int32_t>(rng() % 4);
    job.max_per_node = 1 + static_cast<int32_t>(rng() % 3);
    if (rng() % 2 == 0) job.cb_nodes = 1 + static_cast<int32_t>(rng() % 10);
    if (rng() % 2 == 0) {
      job.stripe_count = 1 + static_cast<int32_t>(rng() % 12);
      job.stripe_size_bytes = 64;
    }
    const int32_t nodes = (job.ranks + job.ranks_per_node - 1) / job.ranks_per_node;
    int32_t want = job.cb_nodes > 0 ? job.cb_nodes : nodes;
    want = std::max(1, std::min({want, nodes * job.max_per_node, job.ranks}));
    while (job.stripe_count > 1 && job.stripe_count % want != 0 && want % job.stripe_count != 0) {
      --want;
    }
    auto choice = ChooseAggregators(job);
    ASSERT_TRUE(choice.ok()) << choice.status().message();
    ASSERT_EQ(static_cast<int32_t>(choice->ranks.size()), want) << "trial " << trial;
    std::vector<int32_t> brute;
    if (want <= nodes) {
      for (int32_t i = 0; i < want; ++i) brute.push_back(i * nodes / want * job.ranks_per_node);
    } else {
      std::vector<int32_t> taken(nodes, 0);
      while (static_cast<int32_t>(brute.size()) < want) {
        int32_t best = -1;
        for (int32_t n = 0; n < nodes; ++n) {
          const int32_t free_ranks =
              std::min(job.ranks_per_node, job.ranks - n * job.ranks_per_node) - taken[n];
          if (free_ranks > 0 && (best < 0 || taken[n] < taken[best])) best = n;
        }
        brute.push_back(best * job.ranks_per_node + taken[best]++);
      }
      std::sort(brute.begin(), brute.end());
    }
    EXPECT_EQ(choice->ranks, brute) << "trial " << trial;
  }
}

// Split/merge on contiguous views of random sizes (one extent per rank, shuffled ranks, random
// gaps), against a model that walks the ranks in file order with plain lists.
TEST(RandomViews, SplitMergeMatchesTheBruteForceModel) {
  std::mt19937_64 rng(52);
  for (int trial = 0; trial < 40; ++trial) {
    const auto ranks = static_cast<int32_t>(1 + rng() % 12);
    std::vector<int32_t> order(ranks);
    for (int32_t r = 0; r < ranks; ++r) order[r] = r;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<RankExtent> extents;
    uint64_t at = 0;
    for (int32_t r : order) {
      if (rng() % 3 == 0) at += 1 + rng() % 50;
      const uint64_t bytes = 1 + rng() % 100;
      extents.push_back({r, at, bytes});
      at += bytes;
    }
    const uint64_t k = 1 + rng() % 300;
    // The model: runs in file order, then each run above k cut into min(ceil(B/k), n) parts of
    // floor-spaced rank counts, then a left-to-right merge.
    std::vector<std::vector<int32_t>> runs;
    std::map<int32_t, uint64_t> bytes_of;
    uint64_t end = 0;
    for (const RankExtent& e : extents) {  // already in file order
      if (runs.empty() || e.offset != end) runs.emplace_back();
      runs.back().push_back(e.rank);
      bytes_of[e.rank] = e.bytes;
      end = e.offset + e.bytes;
    }
    const auto sum = [&](const std::vector<int32_t>& g) {
      uint64_t s = 0;
      for (int32_t r : g) s += bytes_of[r];
      return s;
    };
    std::vector<std::vector<int32_t>> parts;
    for (const auto& run : runs) {
      const uint64_t n = run.size(), b = sum(run);
      const uint64_t p = b <= k ? 1 : std::min((b + k - 1) / k, n);
      for (uint64_t i = 0; i < p; ++i) {
        parts.emplace_back(run.begin() + i * n / p, run.begin() + (i + 1) * n / p);
      }
    }
    std::vector<std::vector<int32_t>> model;
    for (const auto& g : parts) {
      if (!model.empty() && sum(model.back()) < k && sum(g) < k &&
          sum(model.back()) + sum(g) <= k) {
        model.back().insert(model.back().end(), g.begin(), g.end());
      } else {
        model.push_back(g);
      }
    }
    auto groups = SplitMerge(extents, k);
    ASSERT_TRUE(groups.ok());
    std::vector<std::vector<int32_t>> got;
    for (const RankGroup& g : *groups) got.push_back(g.ranks);
    EXPECT_EQ(got, model) << "trial " << trial;
  }
}

// Packing fills node after node up to the per-node limit; spreading never puts more aggregators
// on a node than packing does on its fullest.
TEST(RandomViews, PackedPlacementFillsNodesInOrder) {
  JobShape job;
  job.ranks = 64;
  job.ranks_per_node = 16;
  job.max_per_node = 8;
  EXPECT_EQ(PackAggregators(job, 10), (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 16, 17}));
  EXPECT_EQ(SpreadAggregators(job, 4), (std::vector<int32_t>{0, 16, 32, 48}));
  EXPECT_TRUE(PackAggregators(job, 33).empty());  // 4 nodes x 8 hold 32
}

}  // namespace
}  // namespace iorelay::collective
