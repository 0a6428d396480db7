// OMPIO's static and dynamic segmentation: worked examples, random views against a byte-by-byte
// model of each rule, and bad input.
#include "collective/ompio_cycles.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <tuple>

#include "collective/test_extents.h"

namespace iorelay::collective {
namespace {

constexpr uint64_t kMiB = 1 << 20;

using fixtures::Contiguous;

RankGroup Group(std::vector<int32_t> ranks) { return {std::move(ranks), 0}; }

TEST(OmpioCycles, StaticHandsEveryRankAShareDynamicWritesContiguously) {
  // 4 ranks x 4 MiB in one group, a 4 MiB cycle buffer. Static: each cycle every rank hands 1 MiB
  // (its next), so the aggregator writes 4 scattered MiB per cycle. Dynamic: cycle c takes the
  // next 4 MiB of the file, all of rank c: one contiguous write.
  const auto extents = Contiguous(4, 4 * kMiB);
  const std::vector<RankGroup> one = {Group({0, 1, 2, 3})};
  auto st = PlanOmpio(extents, one, {4 * kMiB, Segmentation::kStatic});
  auto dy = PlanOmpio(extents, one, {4 * kMiB, Segmentation::kDynamic});
  ASSERT_TRUE(st.ok() && dy.ok());
  ASSERT_EQ(st->size(), 4u);
  ASSERT_EQ(dy->size(), 4u);
  for (size_t c = 0; c < 4; ++c) {
    const Cycle& s = (*st)[c];
    ASSERT_EQ(s.flows.size(), 4u);
    for (const Flow& f : s.flows) EXPECT_EQ(f.bytes, kMiB);
    ASSERT_EQ(s.writes.size(), 1u);
    ASSERT_EQ(s.writes[0].ranges.size(), 4u);
    EXPECT_EQ(s.writes[0].ranges[1].begin, 4 * kMiB + c * kMiB);  // rank 1's c-th MiB

    const Cycle& d = (*dy)[c];
    ASSERT_EQ(d.flows.size(), 1u);
    EXPECT_EQ(d.flows[0].rank, static_cast<int32_t>(c));
    ASSERT_EQ(d.writes[0].ranges.size(), 1u);
    EXPECT_EQ(d.writes[0].ranges[0].begin, c * 4 * kMiB);
    EXPECT_EQ(d.writes[0].Bytes(), 4 * kMiB);
  }
}

TEST(OmpioCycles, SplitMergeGroupsEachCycleOnTheirOwn) {
  // The lecture's 4 x 4: four runs of 4 ranks x 2 MiB with gaps, k = 16 MiB: 2 groups of 8 ranks
  // (16 MiB each). With a 16 MiB buffer, dynamic: one cycle, each aggregator writes its two runs.
  std::vector<RankExtent> extents;
  for (int32_t r = 0; r < 16; ++r) {
    extents.push_back({r, (r / 4) * 10 * kMiB + (r % 4) * 2 * kMiB, 2 * kMiB});
  }
  auto groups = SplitMerge(extents, 16 * kMiB);
  ASSERT_TRUE(groups.ok());
  ASSERT_EQ(groups->size(), 2u);
  auto dy = PlanOmpio(extents, *groups, {16 * kMiB, Segmentation::kDynamic});
  ASSERT_TRUE(dy.ok());
  ASSERT_EQ(dy->size(), 1u);
  ASSERT_EQ((*dy)[0].writes.size(), 2u);
  EXPECT_EQ((*dy)[0].writes[1].aggregator, 1);
  ASSERT_EQ((*dy)[0].writes[1].ranges.size(), 2u);  // runs 2 and 3, a gap between
  EXPECT_EQ((*dy)[0].writes[1].ranges[0].begin, 20 * kMiB);
  EXPECT_EQ((*dy)[0].writes[1].Bytes(), 16 * kMiB);
  // Static with a 4 MiB buffer: 8 ranks share it, 512 KiB each per cycle, 4 cycles.
  auto st = PlanOmpio(extents, *groups, {4 * kMiB, Segmentation::kStatic});
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->size(), 4u);
  EXPECT_EQ(StaticShare(4 * kMiB, 8), kMiB / 2);
  for (const Flow& f : (*st)[3].flows) EXPECT_EQ(f.bytes, kMiB / 2);
}

TEST(OmpioCycles, BadInputIsNamed) {
  const auto extents = Contiguous(2, 100);
  auto e = PlanOmpio(extents, {Group({0, 1})}, {0, Segmentation::kDynamic});
  EXPECT_NE(e.status().message().find("cycle_buffer_bytes"), std::string::npos);
  e = PlanOmpio(extents, {Group({0}), Group({0, 1})}, {64, Segmentation::kStatic});
  EXPECT_NE(e.status().message().find("rank 0 is in two groups"), std::string::npos);
  e = PlanOmpio(extents, {Group({0})}, {64, Segmentation::kStatic});
  EXPECT_NE(e.status().message().find("rank 1 has data but is in no group"), std::string::npos);
  e = PlanOmpio(extents, {Group({})}, {64, Segmentation::kStatic});
  EXPECT_NE(e.status().message().find("group 0 has no rank"), std::string::npos);
  e = PlanOmpio({{0, 0, 100}, {1, 50, 100}}, {Group({0, 1})}, {64, Segmentation::kDynamic});
  EXPECT_NE(e.status().message().find("overlap"), std::string::npos);
  auto none = PlanOmpio({}, {}, {64, Segmentation::kDynamic});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// Random views: 1D strided blocks (holes or none) and 2D tiles, ranks grouped at random into
// consecutive runs. The model walks bytes one by one: dynamic, byte i of a group's data in file
// order goes in cycle i / buffer; static, byte j of a rank's own data in cycle j / share.
std::vector<RankExtent> RandomView(std::mt19937_64& rng, int32_t* ranks) {
  std::vector<RankExtent> out;
  if (rng() % 2 == 0) {
    *ranks = 1 + static_cast<int32_t>(rng() % 8);
    const uint64_t block = 1 + rng() % 200, count = 1 + rng() % 8;
    const uint64_t stride = *ranks * block + (rng() % 2 == 0 ? 0 : rng() % 100);
    for (int32_t r = 0; r < *ranks; ++r) {
      for (uint64_t i = 0; i < count; ++i) out.push_back({r, r * block + i * stride, block});
    }
    return out;
  }
  const uint64_t pr = 1 + rng() % 3, pc = 1 + rng() % 3, rows = 1 + rng() % 5;
  const uint64_t cols = 1 + rng() % 30;
  *ranks = static_cast<int32_t>(pr * pc);
  for (uint64_t i = 0; i < pr; ++i) {
    for (uint64_t j = 0; j < pc; ++j) {
      for (uint64_t row = i * rows; row < (i + 1) * rows; ++row) {
        out.push_back({static_cast<int32_t>(i * pc + j), (row * pc + j) * cols, cols});
      }
    }
  }
  return out;
}

using Key = std::tuple<size_t, int32_t, int32_t>;  // cycle, aggregator, rank

TEST(OmpioCycles, RandomViewsMatchAByteByByteModel) {
  std::mt19937_64 rng(51);
  for (int trial = 0; trial < 60; ++trial) {
    int32_t ranks = 0;
    const auto extents = RandomView(rng, &ranks);
    std::vector<RankGroup> groups;
    for (int32_t r = 0; r < ranks; ++r) {
      if (groups.empty() || rng() % 3 == 0) groups.emplace_back();
      groups.back().ranks.push_back(r);
    }
    const OmpioSpec spec{1 + rng() % 400,
                         trial % 2 == 0 ? Segmentation::kStatic : Segmentation::kDynamic};
    auto plan = PlanOmpio(extents, groups, spec);
    ASSERT_TRUE(plan.ok()) << plan.status().message();

    std::map<int32_t, int32_t> group_of;
    for (size_t g = 0; g < groups.size(); ++g) {
      for (int32_t r : groups[g].ranks) group_of[r] = static_cast<int32_t>(g);
    }
    std::map<uint64_t, int32_t> owner;  // byte -> rank, in file order
    for (const RankExtent& e : extents) {
      for (uint64_t b = e.offset; b < e.offset + e.bytes; ++b) owner[b] = e.rank;
    }
    std::map<Key, uint64_t> want_flow;
    std::map<std::pair<size_t, int32_t>, std::set<uint64_t>> want_write;
    std::map<int32_t, uint64_t> seen;  // data bytes so far, per group (dynamic) or rank (static)
    for (const auto& [byte, rank] : owner) {
      const int32_t a = group_of[rank];
      const size_t cycle =
          spec.segmentation == Segmentation::kDynamic
              ? seen[a]++ / spec.cycle_buffer_bytes
              : seen[rank]++ / StaticShare(spec.cycle_buffer_bytes, groups[a].ranks.size());
      want_flow[{cycle, a, rank}] += 1;
      want_write[{cycle, a}].insert(byte);
    }
    std::map<Key, uint64_t> got_flow;
    std::map<std::pair<size_t, int32_t>, std::set<uint64_t>> got_write;
    for (size_t c = 0; c < plan->size(); ++c) {
      for (const Flow& f : (*plan)[c].flows) got_flow[{c, f.aggregator, f.rank}] += f.bytes;
      for (const AggregatorWrite& w : (*plan)[c].writes) {
        for (size_t i = 0; i < w.ranges.size(); ++i) {
          if (i > 0) {
            EXPECT_LT(w.ranges[i - 1].end, w.ranges[i].begin);  // joined, in order
          }
          for (uint64_t b = w.ranges[i].begin; b < w.ranges[i].end; ++b) {
            got_write[{c, w.aggregator}].insert(b);
          }
        }
      }
    }
    EXPECT_EQ(got_flow, want_flow) << "trial " << trial;
    EXPECT_EQ(got_write, want_write) << "trial " << trial;
  }
}

}  // namespace
}  // namespace iorelay::collective
