// Chaarawi & Gabriel's split/merge grouping on the worked examples of docs/collective.md and on
// random extents checked against the rule's properties.
#include "collective/split_merge.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace iorelay::collective {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// `ranks` ranks of `bytes` each, back to back in rank order from `offset`.
std::vector<RankExtent> Contiguous(int32_t first, int32_t ranks, uint64_t bytes,
                                   uint64_t offset = 0) {
  std::vector<RankExtent> out;
  for (int32_t r = 0; r < ranks; ++r) out.push_back({first + r, offset + r * bytes, bytes});
  return out;
}

std::vector<int32_t> Aggregators(const std::vector<RankExtent>& extents, uint64_t k) {
  auto groups = SplitMerge(extents, k);
  EXPECT_TRUE(groups.ok()) << groups.status().message();
  return groups.ok() ? GroupAggregators(*groups) : std::vector<int32_t>{};
}

TEST(SplitMerge, EveryRankAboveKMakesEveryRankAnAggregator) {
  // The lecture's case: 4 ranks write 40 MiB each with k = 32 MiB.
  EXPECT_EQ(Aggregators(Contiguous(0, 4, 40 * kMiB), 32 * kMiB),
            (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(SplitMerge, ALargeGroupIsSplitIntoKSizedParts) {
  // 16 ranks of 4 MiB in one contiguous run (64 MiB), k = 32 MiB: two groups of 8 ranks.
  auto groups = SplitMerge(Contiguous(0, 16, 4 * kMiB), 32 * kMiB);
  ASSERT_TRUE(groups.ok());
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_EQ((*groups)[0].bytes, 32 * kMiB);
  EXPECT_EQ(GroupAggregators(*groups), (std::vector<int32_t>{0, 8}));
}

TEST(SplitMerge, SmallGroupsMergeWhileTheSumStaysWithinK) {
  // 4 x 4: four runs of 4 ranks x 2 MiB (8 MiB each), with gaps between the runs.
  std::vector<RankExtent> extents;
  for (int32_t g = 0; g < 4; ++g) {
    auto run = Contiguous(4 * g, 4, 2 * kMiB, g * 100 * kMiB);
    extents.insert(extents.end(), run.begin(), run.end());
  }
  EXPECT_EQ(FileContiguousGroups(extents).size(), 4u);
  EXPECT_EQ(Aggregators(extents, 32 * kMiB), (std::vector<int32_t>{0}));            // 32 <= 32
  EXPECT_EQ(Aggregators(extents, 16 * kMiB), (std::vector<int32_t>{0, 8}));         // pairs
  EXPECT_EQ(Aggregators(extents, 12 * kMiB), (std::vector<int32_t>{0, 4, 8, 12}));  // none
}

TEST(SplitMerge, GroupsFollowFileOrderNotRankOrder) {
  // Rank 3 holds the start of the file, rank 0 its end.
  std::vector<RankExtent> extents = {
      {0, 3 * kMiB, kMiB}, {1, 2 * kMiB, kMiB}, {2, kMiB, kMiB}, {3, 0, kMiB}};
  auto groups = FileContiguousGroups(extents);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].ranks, (std::vector<int32_t>{3, 2, 1, 0}));
  EXPECT_EQ(Aggregators(extents, 2 * kMiB), (std::vector<int32_t>{3, 1}));
}

TEST(SplitMerge, BadInputIsNamed) {
  EXPECT_FALSE(SplitMerge(Contiguous(0, 2, kMiB), 0).ok());
  auto twice = SplitMerge({{0, 0, kMiB}, {0, 4 * kMiB, kMiB}}, kMiB);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("rank 0 has two extents"), std::string::npos);
}

// Random extents (a shuffled rank order, random sizes, random gaps): every rank with bytes is in
// exactly one group, groups are consecutive in file order, a group above k has one rank or came
// from a split (parts of a run never exceed ceil(B / k) of it), and no two neighbours could
// still have merged.
TEST(SplitMerge, RandomExtentsKeepTheRule) {
  std::mt19937_64 rng(51);
  for (int trial = 0; trial < 300; ++trial) {
    const int32_t ranks = 1 + static_cast<int32_t>(rng() % 40);
    std::vector<int32_t> order(ranks);
    for (int32_t r = 0; r < ranks; ++r) order[r] = r;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<RankExtent> extents;
    uint64_t at = 0;
    for (int32_t r : order) {
      if (rng() % 4 == 0) at += 1 + rng() % kMiB;  // a gap starts a new run
      const uint64_t bytes = rng() % 5 == 0 ? 0 : 1 + rng() % (8 * kMiB);
      extents.push_back({r, at, bytes});
      at += bytes;
    }
    const uint64_t k = 1 + rng() % (16 * kMiB);
    auto groups = SplitMerge(extents, k);
    ASSERT_TRUE(groups.ok());
    // File order of the ranks with bytes, as FileContiguousGroups sees them.
    std::vector<int32_t> file_order;
    for (const RankGroup& g : FileContiguousGroups(extents)) {
      file_order.insert(file_order.end(), g.ranks.begin(), g.ranks.end());
    }
    std::vector<int32_t> grouped;
    for (const RankGroup& g : *groups) {
      ASSERT_FALSE(g.ranks.empty());
      grouped.insert(grouped.end(), g.ranks.begin(), g.ranks.end());
    }
    EXPECT_EQ(grouped, file_order);
    for (size_t i = 1; i < groups->size(); ++i) {
      const RankGroup &a = (*groups)[i - 1], &b = (*groups)[i];
      EXPECT_FALSE(a.bytes < k && b.bytes < k && a.bytes + b.bytes <= k) << "unmerged pair";
    }
    EXPECT_LE(groups->size(), file_order.size());
  }
}

}  // namespace
}  // namespace iorelay::collective
