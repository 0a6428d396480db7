// WorkerSpinRule: an idle worker spins while the workers' next dispatches came within the
// window and the cores are not short, and never without a window.
#include "daemon/worker_spin_rule.h"

#include <gtest/gtest.h>

namespace iorelay::daemon {
namespace {

constexpr int64_t kUs = 1000;
using Mode = WorkerSpinRule::Mode;

// Gaps of `gap_ns` between the workers going idle and their next dispatch, `n` times.
void Gaps(WorkerSpinRule* r, int64_t gap_ns, int n, int64_t* now) {
  for (int i = 0; i < n; ++i) {
    r->Idle(*now);
    *now += gap_ns;
    r->Work(*now);
    *now += 10 * kUs;  // the dispatch runs
  }
}

TEST(WorkerSpinRuleTest, SpinsWhileDispatchesComeWithinTheWindow) {
  WorkerSpinRule r(50 * kUs, Mode::kAdaptive);
  EXPECT_TRUE(r.ShouldSpin(1, 2));  // no gap seen yet: as always
  int64_t now = 0;
  Gaps(&r, 15 * kUs, 20, &now);  // a client's round trip after each slow call
  EXPECT_TRUE(r.ShouldSpin(1, 2));
  EXPECT_LT(r.mean_gap_ns(), 20 * kUs);
}

TEST(WorkerSpinRuleTest, StopsWhenDispatchesComeSeldomAndStartsAgainWhenTheyComeSoon) {
  WorkerSpinRule r(50 * kUs, Mode::kAdaptive);
  int64_t now = 0;
  Gaps(&r, 2'000 * kUs, 20, &now);  // the loops run almost everything; a worker gets one a ms
  EXPECT_FALSE(r.ShouldSpin(1, 2));
  EXPECT_LE(r.mean_gap_ns(), 100 * kUs);  // one gap counts at most twice the window
  Gaps(&r, 10 * kUs, 12, &now);
  EXPECT_TRUE(r.ShouldSpin(1, 2));
}

TEST(WorkerSpinRuleTest, OneLongPauseDoesNotStopAWorkerThatWasCatchingItsWork) {
  WorkerSpinRule r(50 * kUs, Mode::kAdaptive);
  int64_t now = 0;
  Gaps(&r, 10 * kUs, 20, &now);
  Gaps(&r, 60'000'000 * kUs, 1, &now);  // a minute without work
  EXPECT_TRUE(r.ShouldSpin(1, 2));
}

TEST(WorkerSpinRuleTest, IdleTwiceKeepsTheFirstStartAndWorkWithoutAGapCountsNothing) {
  WorkerSpinRule r(50 * kUs, Mode::kAdaptive);
  r.Work(5 * kUs);  // no gap open: nothing counted
  EXPECT_EQ(r.mean_gap_ns(), 0);
  r.Idle(0);
  r.Idle(90 * kUs);  // a second worker going idle does not restart the gap
  EXPECT_TRUE(r.gap_open());
  r.Work(100 * kUs);
  EXPECT_FALSE(r.gap_open());
  EXPECT_EQ(r.mean_gap_ns(), 100 * kUs / 8);
}

TEST(WorkerSpinRuleTest, NoSpinWhileRunnableThreadsOutnumberTheCores) {
  WorkerSpinRule r(50 * kUs, Mode::kAdaptive);
  int64_t now = 0;
  Gaps(&r, 10 * kUs, 20, &now);
  EXPECT_TRUE(r.ShouldSpin(2, 2));
  EXPECT_FALSE(r.ShouldSpin(3, 2));
  EXPECT_TRUE(r.ShouldSpin(-1, 2));  // unknown: the gaps decide
}

TEST(WorkerSpinRuleTest, AlwaysSpinsWithAWindowAndNeverWithout) {
  WorkerSpinRule always(50 * kUs, Mode::kAlways);
  int64_t now = 0;
  Gaps(&always, 2'000 * kUs, 20, &now);
  EXPECT_TRUE(always.ShouldSpin(9, 2));
  EXPECT_FALSE(WorkerSpinRule(0, Mode::kAlways).ShouldSpin(1, 2));
  EXPECT_FALSE(WorkerSpinRule(0, Mode::kAdaptive).ShouldSpin(1, 2));
}

}  // namespace
}  // namespace iorelay::daemon
