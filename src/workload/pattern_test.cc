// Tests of the access patterns shared by iorelay-bench and iorelay-sim: derived sizes, offsets,
// names, and the combinations both programs refuse.
#include "workload/pattern.h"

#include <gtest/gtest.h>

namespace iorelay::workload {
namespace {

Shape DeriveOk(const PatternSpec& spec, uint32_t ranks) {
  Result<Shape> s = Derive(spec, ranks);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Shape{};
}

TEST(WorkloadPattern, DefaultsAreSixteenRequestsPerRank) {
  PatternSpec spec;
  EXPECT_EQ(DeriveOk(spec, 4).RequestsPerRank(), kDefaultRequestsPerRank);
  spec.spatiality = Spatiality::kStrided;
  const Shape strided = DeriveOk(spec, 4);
  EXPECT_EQ(strided.block_bytes, spec.request_bytes);
  EXPECT_EQ(strided.segments, kDefaultRequestsPerRank);
}

TEST(WorkloadPattern, TotalGivesBlockForContiguousAndSegmentsForStrided) {
  PatternSpec spec;
  spec.total_bytes = 4 << 20;
  const Shape contiguous = DeriveOk(spec, 4);
  EXPECT_EQ(contiguous.block_bytes, 1u << 20);
  EXPECT_EQ(contiguous.segments, 1u);
  spec.spatiality = Spatiality::kStrided;
  const Shape strided = DeriveOk(spec, 4);
  EXPECT_EQ(strided.block_bytes, 64u << 10);
  EXPECT_EQ(strided.segments, 16u);
}

TEST(WorkloadPattern, OffsetsOfEachLayout) {
  PatternSpec spec;
  spec.request_bytes = 8 << 10;
  spec.block_bytes = 32 << 10;
  const Shape shared = DeriveOk(spec, 4);
  EXPECT_EQ(shared.Offset(2, 4, 0), 64u << 10);
  EXPECT_EQ(shared.Offset(2, 4, 3), (64u + 24u) << 10);
  spec.layout = Layout::kFilePerProcess;
  EXPECT_EQ(DeriveOk(spec, 4).Offset(3, 4, 1), 8u << 10);
  spec = PatternSpec{};
  spec.spatiality = Spatiality::kStrided;
  spec.request_bytes = 8 << 10;
  spec.segments = 3;
  const Shape strided = DeriveOk(spec, 4);  // segment k of rank r at (k * P + r) * t
  EXPECT_EQ(strided.Offset(1, 4, 2), (2 * 4 + 1) * (8u << 10));
}

TEST(WorkloadPattern, RefusesImpossibleCombinations) {
  std::vector<PatternSpec> bad(10);
  bad[0].request_bytes = 1001;
  bad[1].odirect = true;
  bad[1].request_bytes = 8192 + 8;
  bad[2].layout = Layout::kFilePerProcess;
  bad[2].spatiality = Spatiality::kStrided;
  bad[3].wearout = true;
  bad[4].stonewall_s = -1;
  bad[5].total_bytes = 1 << 20;
  bad[5].block_bytes = 64 << 10;
  bad[6].spatiality = Spatiality::kStrided;
  bad[6].block_bytes = 128 << 10;
  bad[7].segments = 2;
  bad[8].total_bytes = 1024;
  bad[9].block_bytes = 96 << 10;
  for (size_t i = 0; i < bad.size(); ++i) EXPECT_FALSE(Derive(bad[i], 4).ok()) << i;
  EXPECT_FALSE(Derive(PatternSpec{}, 0).ok());
}

TEST(WorkloadPattern, NamesRoundTripThroughTheChoices) {
  for (const auto& [name, layout] : LayoutChoices()) EXPECT_EQ(LayoutName(layout), name);
  for (const auto& [name, s] : SpatialityChoices()) EXPECT_EQ(SpatialityName(s), name);
  EXPECT_STREQ(LayoutName(Layout::kFilePerProcess), "fpp");
  EXPECT_STREQ(SpatialityName(Spatiality::kStrided), "strided");
}

}  // namespace
}  // namespace iorelay::workload
