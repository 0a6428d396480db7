// File domains: ROMIO's even domains and the Lustre modulo rule, with the property that makes the
// aggregator count's stripe alignment worth having (each target met by one aggregator).
#include "collective/file_domains.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "collective/aggregators.h"

namespace iorelay::collective {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST(FileDomains, EvenDomainsCoverTheRangeInOrder) {
  auto d = EvenDomains(0, 100, 3);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 3u);
  EXPECT_EQ((*d)[0].end, 34u);
  EXPECT_EQ((*d)[1].begin, 34u);
  EXPECT_EQ((*d)[1].end, 68u);
  EXPECT_EQ((*d)[2].end, 100u);
  auto tiny = EvenDomains(10, 12, 4);  // more aggregators than bytes: the last ones are empty
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ((*tiny)[3].begin, (*tiny)[3].end);
  EXPECT_FALSE(EvenDomains(0, 10, 0).ok());
  EXPECT_FALSE(EvenDomains(10, 0, 2).ok());
}

TEST(FileDomains, LustreModuloRule) {
  // 1 MiB stripes, 4 aggregators: byte 5.5 MiB is in stripe 5, which aggregator 1 writes.
  EXPECT_EQ(StripeAggregator(5 * kMiB + kMiB / 2, kMiB, 4), 1);
  EXPECT_EQ(StripeAggregator(4 * kMiB - 1, kMiB, 4), 3);
  EXPECT_EQ(StripeTarget(9 * kMiB, kMiB, 8), 1);
}

// With the aligned count (a divisor or multiple of the stripe count), every target is written by
// aggregators of one residue class only: with A | C each target has exactly one aggregator, with
// C | A each aggregator meets exactly one target. Checked by brute force over 64 stripes.
TEST(FileDomains, AlignedCountsGiveEachTargetFixedAggregators) {
  for (int32_t stripes = 1; stripes <= 16; ++stripes) {
    for (int32_t nodes = 1; nodes <= 24; ++nodes) {
      JobShape job;
      job.ranks = nodes;
      job.stripe_count = stripes;
      job.stripe_size_bytes = kMiB;
      const int32_t a = *AggregatorCount(job);
      std::map<int32_t, std::set<int32_t>> aggregators_of_target, targets_of_aggregator;
      for (uint64_t s = 0; s < 64 * static_cast<uint64_t>(stripes); ++s) {
        const uint64_t offset = s * kMiB;
        const int32_t agg = StripeAggregator(offset, kMiB, a);
        const int32_t target = StripeTarget(offset, kMiB, stripes);
        aggregators_of_target[target].insert(agg);
        targets_of_aggregator[agg].insert(target);
      }
      for (const auto& [t, aggs] : aggregators_of_target) {
        EXPECT_EQ(aggs.size(), static_cast<size_t>(std::max(1, a / stripes)))
            << stripes << " stripes, " << a << " aggregators";
      }
      for (const auto& [agg, targets] : targets_of_aggregator) {
        EXPECT_EQ(targets.size(), static_cast<size_t>(std::max(1, stripes / a)));
      }
    }
  }
}

}  // namespace
}  // namespace iorelay::collective
