// The dispatch core without a daemon: merging, the IOV_MAX split, the O_DIRECT split, short
// counts and errors.
#include "dispatch/plan.h"

#include <gtest/gtest.h>

namespace iorelay::dispatch {
namespace {

// `n` contiguous positional requests of `len` bytes from offset 0.
std::vector<RequestDesc> Contiguous(size_t n, uint64_t len = 4096) {
  std::vector<RequestDesc> r(n);
  for (size_t i = 0; i < n; ++i) r[i].offset = i * len, r[i].length = len;
  return r;
}

// The plan as lists: {'C' or 'R', indices...} per step.
std::vector<std::vector<size_t>> Shape(const Plan& p, std::string* kinds) {
  std::vector<std::vector<size_t>> out;
  kinds->clear();
  for (const Step& s : p.steps) {
    kinds->push_back(s.kind == Step::Kind::kCall ? 'C' : 'R');
    auto idx = p.Of(s);
    out.emplace_back(idx.begin(), idx.end());
  }
  return out;
}

TEST(BuildPlanTest, ContiguousRequestsMergeIntoOneCall) {
  Plan p;
  std::string kinds;
  BuildPlan(Contiguous(3), false, &p);
  EXPECT_EQ(Shape(p, &kinds), (std::vector<std::vector<size_t>>{{0, 1, 2}}));
  EXPECT_EQ(kinds, "C");
}

TEST(BuildPlanTest, GapsOpenModesAppendAndFileOffsetsSplit) {
  std::vector<RequestDesc> r = Contiguous(6);
  r[2].offset += 1;  // a gap before 2
  r[3].offset = r[2].offset + r[2].length;
  r[4].merge_class = 1;     // another open mode (e.g. O_SYNC)
  r[5].positional = false;  // a write at the file offset
  Plan p;
  std::string kinds;
  BuildPlan(r, false, &p);
  EXPECT_EQ(Shape(p, &kinds), (std::vector<std::vector<size_t>>{{0, 1}, {2, 3}, {4}, {5}}));
  r = Contiguous(3);
  r[1].append = true;
  BuildPlan(r, false, &p);
  EXPECT_EQ(Shape(p, &kinds), (std::vector<std::vector<size_t>>{{0}, {1}, {2}}));
}

TEST(BuildPlanTest, IovMaxSplitsLongRuns) {
  Plan p;
  std::string kinds;
  BuildPlan(Contiguous(kMaxIov + 476), false, &p);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.Of(p.steps[0]).size(), kMaxIov);
  EXPECT_EQ(p.Of(p.steps[1]).size(), 476u);
  EXPECT_EQ(p.Of(p.steps[1]).front(), kMaxIov);
}

TEST(BuildPlanTest, MisalignedDirectRequestIsRefusedAloneWhereItStands) {
  std::vector<RequestDesc> r = Contiguous(4);
  for (RequestDesc& d : r) d.direct_align = 512, d.buffer = 4096 * 16;
  r[2].buffer += 8;  // a buffer off the alignment
  Plan p;
  std::string kinds;
  BuildPlan(r, false, &p);
  // 0 and 1 go out together; 2 is refused; 3 no longer continues 1, so it is a call of its own.
  EXPECT_EQ(Shape(p, &kinds), (std::vector<std::vector<size_t>>{{2}, {0, 1}, {3}}));
  EXPECT_EQ(kinds, "RCC");
  EXPECT_EQ(p.steps[0].error, EINVAL);
  r[2].buffer -= 8;
  r[3].length = 100;  // a length off the alignment
  BuildPlan(r, false, &p);
  EXPECT_EQ(Shape(p, &kinds), (std::vector<std::vector<size_t>>{{3}, {0, 1, 2}}));
  EXPECT_EQ(kinds, "RC");
}

TEST(BuildPlanTest, OverlappingDispatchServesEachRequestAlone) {
  Plan p;
  std::string kinds;
  BuildPlan(Contiguous(3), true, &p);
  EXPECT_EQ(Shape(p, &kinds), (std::vector<std::vector<size_t>>{{0}, {1}, {2}}));
}

TEST(SplitResultTest, FullShortAndFailedCalls) {
  const std::vector<uint64_t> lengths = {4096, 4096, 4096, 0, 4096};
  std::vector<Share> s;
  SplitResult(size_t{16384}, lengths, &s);
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].bytes, lengths[i]) << i;
    EXPECT_FALSE(s[i].retry_alone);
  }
  // A short count: 0 full, 1 partial, 2 retried alone, the empty 3 done with 0, 4 retried.
  SplitResult(size_t{6000}, lengths, &s);
  EXPECT_EQ(s[0].bytes, 4096u);
  EXPECT_EQ(s[1].bytes, 6000u - 4096u);
  EXPECT_TRUE(s[2].retry_alone);
  EXPECT_FALSE(s[3].retry_alone);
  EXPECT_EQ(s[3].bytes, 0u);
  EXPECT_TRUE(s[4].retry_alone);
  // An error: every request gets it.
  SplitResult(Status::FromErrno(ENOSPC, "full"), lengths, &s);
  for (const Share& share : s) {
    EXPECT_EQ(share.error, ENOSPC);
    EXPECT_FALSE(share.retry_alone);
  }
  // Nothing done (end of file for a read): every non-empty request tries alone.
  SplitResult(size_t{0}, lengths, &s);
  EXPECT_TRUE(s[0].retry_alone && s[1].retry_alone && s[2].retry_alone && s[4].retry_alone);
}

}  // namespace
}  // namespace iorelay::dispatch
