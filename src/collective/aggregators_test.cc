// The aggregator count rules and their spread over nodes, on worked examples and on random shapes
// checked against the rules' properties.
#include "collective/aggregators.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

namespace iorelay::collective {
namespace {

constexpr uint64_t kMiB = 1 << 20;

JobShape Shape(int32_t ranks, int32_t per_node) {
  JobShape job;
  job.ranks = ranks;
  job.ranks_per_node = per_node;
  return job;
}

std::vector<int32_t> Chosen(const JobShape& job) {
  auto choice = ChooseAggregators(job);
  EXPECT_TRUE(choice.ok()) << choice.status().message();
  return choice.ok() ? choice->ranks : std::vector<int32_t>{};
}

TEST(AggregatorCount, RomioDefaultIsOnePerNode) {
  EXPECT_EQ(Chosen(Shape(16, 4)), (std::vector<int32_t>{0, 4, 8, 12}));
  EXPECT_EQ(Chosen(Shape(10, 4)), (std::vector<int32_t>{0, 4, 8}));  // a part-filled last node
}

TEST(AggregatorCount, CbNodesBelowTheNodesTakesEvenlySpacedNodes) {
  JobShape job = Shape(16, 4);
  job.cb_nodes = 2;
  EXPECT_EQ(Chosen(job), (std::vector<int32_t>{0, 8}));
}

TEST(AggregatorCount, CbNodesAboveTheNodesIsCappedByThePerNodeLimit) {
  JobShape job = Shape(16, 4);
  job.cb_nodes = 8;
  std::vector<std::string> reasons;
  EXPECT_EQ(*AggregatorCount(job, &reasons), 4);  // cb_config_list *:1
  EXPECT_NE(reasons.back().find("capped at 4"), std::string::npos);
  job.max_per_node = 2;  // *:2: the second rank of each node joins, spread, not packed
  EXPECT_EQ(Chosen(job), (std::vector<int32_t>{0, 1, 4, 5, 8, 9, 12, 13}));
}

TEST(AggregatorCount, SaturationPointGivesOneAggregatorPerKBytes) {
  JobShape job = Shape(16, 4);
  job.max_per_node = 4;
  job.saturation_point_bytes = 32 * kMiB;  // OMPIO's default k
  job.bytes_per_collective = 100 * kMiB;
  EXPECT_EQ(*AggregatorCount(job), 4);
  job.bytes_per_collective = 16 * kMiB;  // less than k: one aggregator
  EXPECT_EQ(Chosen(job), (std::vector<int32_t>{0}));
  job.bytes_per_collective = 16 * 40 * kMiB;  // every rank more than k: every rank aggregates
  EXPECT_EQ(*AggregatorCount(job), 16);
}

TEST(AggregatorCount, StripedFilesAlignTheCountToTheStripeCount) {
  JobShape job = Shape(12, 1);  // 12 nodes, one aggregator each by default
  job.stripe_size_bytes = kMiB;
  const std::map<int32_t, int32_t> want = {{8, 8}, {4, 12}, {5, 10}, {7, 7}, {16, 8}, {24, 12}};
  for (const auto& [stripes, count] : want) {
    job.stripe_count = stripes;
    EXPECT_EQ(*AggregatorCount(job), count) << stripes << " stripes";
  }
  job.ranks = 3;
  job.stripe_count = 4;
  EXPECT_EQ(*AggregatorCount(job), 2);  // 3 does not divide 4: 2 does
}

TEST(AggregatorCount, IoNodesGetAsManyAggregatorsEach) {
  JobShape job = Shape(24, 4);  // 6 nodes
  job.ionodes = 4;
  EXPECT_EQ(Chosen(job), (std::vector<int32_t>{0, 4, 12, 16}));  // nodes 0, 1, 3, 4
  job.ionodes = 2;
  EXPECT_EQ(*AggregatorCount(job), 6);
  job.ranks = 12;  // 3 nodes for 4 I/O nodes: fewer than one each, left alone
  job.ionodes = 4;
  EXPECT_EQ(*AggregatorCount(job), 3);
}

TEST(AggregatorCount, BadShapesAreNamed) {
  const std::vector<std::pair<JobShape, std::string>> bad = {
      {Shape(0, 1), "ranks"},
      {Shape(4, 0), "ranks_per_node"},
      {[] {
         JobShape j = Shape(4, 1);
         j.stripe_count = 0;
         return j;
       }(),
       "stripe_count"},
      {[] {
         JobShape j = Shape(4, 1);
         j.stripe_count = 4;
         return j;
       }(),
       "stripe_size_bytes"},
      {[] {
         JobShape j = Shape(4, 1);
         j.saturation_point_bytes = kMiB;
         return j;
       }(),
       "bytes_per_collective"},
  };
  for (const auto& [job, field] : bad) {
    auto r = AggregatorCount(job);
    ASSERT_FALSE(r.ok()) << field;
    EXPECT_NE(r.status().message().find(field), std::string::npos) << r.status().message();
  }
}

// For random shapes: the ranks are distinct and valid, their count is what AggregatorCount said,
// nodes differ by at most one aggregator, and the count obeys the rule that applied last.
TEST(AggregatorCount, RandomShapesKeepTheRules) {
  std::mt19937 rng(51);
  for (int trial = 0; trial < 500; ++trial) {
    JobShape job = Shape(1 + rng() % 200, 1 + rng() % 16);
    job.max_per_node = 1 + rng() % 4;
    job.ionodes = rng() % 5;
    if (rng() % 3 == 0) job.cb_nodes = 1 + rng() % 64;
    if (rng() % 3 == 0) {
      job.stripe_count = 1 + rng() % 24;
      job.stripe_size_bytes = kMiB;
    }
    const int32_t count = *AggregatorCount(job);
    const std::vector<int32_t> ranks = SpreadAggregators(job, count);
    ASSERT_EQ(static_cast<int32_t>(ranks.size()), count);
    EXPECT_LE(count, std::min(job.ranks, NodeCount(job) * job.max_per_node));
    std::set<int32_t> distinct(ranks.begin(), ranks.end());
    EXPECT_EQ(distinct.size(), ranks.size());
    std::map<int32_t, int32_t> per_node;
    for (int32_t r : ranks) {
      ASSERT_TRUE(r >= 0 && r < job.ranks);
      ++per_node[r / job.ranks_per_node];
    }
    // Spread: a node has two more aggregators than another only when that one has no rank left.
    for (int32_t n = 0; n < NodeCount(job); ++n) {
      const int32_t on_node = std::min(job.ranks_per_node, job.ranks - n * job.ranks_per_node);
      for (int32_t m = 0; m < NodeCount(job); ++m) {
        if (per_node[n] + 1 < per_node[m]) {
          EXPECT_EQ(per_node[n], on_node) << n << " vs " << m;
        }
      }
    }
    if (job.stripe_count == 1 && job.ionodes > 1 && count >= job.ionodes) {
      EXPECT_EQ(count % job.ionodes, 0);
    }
    if (job.stripe_count > 1) {
      EXPECT_TRUE(job.stripe_count % count == 0 || count % job.stripe_count == 0);
    }
  }
}

}  // namespace
}  // namespace iorelay::collective
