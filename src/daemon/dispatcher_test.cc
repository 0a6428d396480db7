// Dispatcher: where dispatches run. The submitting thread runs one itself only while recent
// dispatches were fast; slow ones go to the workers, so the submitting event loop keeps reading
// and requests can queue in the scheduler (where they merge).
#include "daemon/dispatcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "sched/registry.h"

namespace iorelay::daemon {
namespace {

std::unique_ptr<sched::Scheduler> Fifo() {
  sched::SchedulerRegistry registry;
  sched::RegisterBuiltinSchedulers(&registry);
  auto s = registry.CreateFromSpec("fifo");
  return s.ok() ? std::move(*s) : nullptr;
}

std::unique_ptr<Work> Write(uint64_t offset) {
  auto w = std::make_unique<Work>();
  w->request.file = sched::FileKey{1, 2};
  w->request.op = sched::IoOp::kWrite;
  w->request.offset = offset;
  w->request.length = 4096;
  return w;
}

// Submits `n` writes from this thread, one after the other completing (as one client would);
// counts the dispatches that ran on this thread.
int RunOnCaller(std::chrono::microseconds call, int n, int64_t inline_max_ns) {
  sched::RealClock clock;
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> on_caller{0};
  std::atomic<int> done{0};
  Dispatcher d(Fifo(), &clock, 4, inline_max_ns,
               [&](const sched::Dispatch&, Work* const*, size_t n_works, int* results) {
                 std::this_thread::sleep_for(call);
                 if (std::this_thread::get_id() == caller) on_caller.fetch_add(1);
                 for (size_t i = 0; i < n_works; ++i) results[i] = 0;
                 done.fetch_add(static_cast<int>(n_works));
               });
  for (int i = 0; i < n; ++i) {
    d.Submit(Write(static_cast<uint64_t>(i) * 4096), /*may_run_inline=*/true);
    while (done.load() <= i) std::this_thread::yield();
  }
  d.Drain();
  d.Stop();
  return on_caller.load();
}

TEST(Dispatcher, FastDispatchesRunOnTheSubmittingThread) {
  // A bound far above these calls' cost, so that a descheduled moment cannot lift the mean.
  EXPECT_EQ(RunOnCaller(std::chrono::microseconds(0), 50, 100'000'000), 50);
}

TEST(Dispatcher, SlowDispatchesGoToTheWorkersAfterTheFirst) {
  // The first call is inline (nothing measured yet); from then on the mean is far above
  // 50 us, and the caller is free to read on while a worker waits.
  EXPECT_EQ(RunOnCaller(std::chrono::milliseconds(2), 10, 50'000), 1);
}

TEST(Dispatcher, ZeroBoundNeverRunsOnTheSubmittingThread) {
  EXPECT_EQ(RunOnCaller(std::chrono::microseconds(0), 10, 0), 0);
}

}  // namespace
}  // namespace iorelay::daemon
