// Dispatcher: where dispatches run. The submitting thread runs one itself only while recent
// dispatches were fast; slow ones go to the workers, so the submitting event loop keeps reading
// and requests can queue in the scheduler (where they merge).
#include "daemon/dispatcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "sched/registry.h"

namespace iorelay::daemon {
namespace {

std::unique_ptr<sched::Scheduler> Fifo() {
  sched::SchedulerRegistry registry;
  sched::RegisterBuiltinSchedulers(&registry);
  auto s = registry.CreateFromSpec("fifo");
  return s.ok() ? std::move(*s) : nullptr;
}

std::unique_ptr<Work> Write(uint64_t offset, uint64_t length, proto::Op op) {
  auto w = std::make_unique<Work>();
  w->op = op;
  w->request.file = sched::FileKey{1, 2};
  w->request.op = sched::IoOp::kWrite;
  w->request.offset = offset;
  w->request.length = length;
  return w;
}

// Virtual time that only the calls advance (so the measured durations are exact), safe to read
// from the caller and the workers alike.
class CallClock final : public sched::Clock {
 public:
  int64_t NowNs() const override { return now_ns_.load(); }
  void Advance(std::chrono::nanoseconds d) { now_ns_.fetch_add(d.count()); }

 private:
  std::atomic<int64_t> now_ns_{0};
};

// Submits `n` writes of `length` bytes from this thread, one after the other completing (as one
// client would), each call taking `call` of virtual time; counts the dispatches that ran on this
// thread.
int RunOnCaller(std::chrono::microseconds call, int n, int64_t inline_max_ns,
                uint64_t length = 4096, proto::Op op = proto::Op::kPwrite) {
  CallClock clock;
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> on_caller{0};
  std::atomic<int> done{0};
  Dispatcher d(Fifo(), &clock, 4, inline_max_ns, /*worker_spin_ns=*/0,
               [&](const sched::Dispatch&, Work* const*, size_t n_works, int* results) {
                 clock.Advance(call);
                 if (std::this_thread::get_id() == caller) on_caller.fetch_add(1);
                 for (size_t i = 0; i < n_works; ++i) results[i] = 0;
                 done.fetch_add(static_cast<int>(n_works));
               });
  for (int i = 0; i < n; ++i) {
    d.Submit(Write(static_cast<uint64_t>(i) * length, length, op), /*may_run_inline=*/true);
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

TEST(Dispatcher, LargeDispatchesCountTheirTimePer64KiBUpToFourTimesTheBound) {
  // 2 ms for 1 MiB is 125 us per 64 KiB: fast against a 1 ms bound (and under 4 ms in all).
  EXPECT_EQ(RunOnCaller(std::chrono::milliseconds(2), 10, 1'000'000, 1 << 20), 10);
  // The same time for 4 KiB is slow against it: once the mean (each call weighing 1/8) has risen
  // above the bound, after six calls (0.25, 0.47, 0.66, 0.83, 0.98, 1.10 ms), they go to the
  // workers.
  EXPECT_EQ(RunOnCaller(std::chrono::milliseconds(2), 10, 1'000'000, 4096), 6);
  // And 2 ms is slow against a 50 us bound, however large the call: more than 4 times it.
  EXPECT_EQ(RunOnCaller(std::chrono::milliseconds(2), 10, 50'000, 1 << 20), 1);
  // A request larger than a client's 1 MiB pieces is never run by the caller.
  EXPECT_EQ(RunOnCaller(std::chrono::microseconds(0), 10, 100'000'000, (1 << 20) + 1), 0);
}

TEST(Dispatcher, RunCostIsTimePer64KiBButAtLeastAQuarterOfTheTime) {
  EXPECT_EQ(RunCost(100'000, 8192), 100'000);
  EXPECT_EQ(RunCost(64'000, 1 << 20), 16'000);      // 4,000 per 64 KiB; a quarter is more
  EXPECT_EQ(RunCost(1'600'000, 1 << 20), 400'000);  // 100,000 per 64 KiB; a quarter is more
  EXPECT_EQ(RunCost(1'600'000, 64 << 20), 400'000);
  EXPECT_EQ(RunCost(640'000, 256 << 10), 160'000);  // 160,000 per 64 KiB, as a quarter
}

// A write or read at the description's offset waits for the offset's lock, which a worker
// holds for a whole backend call: it is handed to a worker, however fast dispatches are.
TEST(Dispatcher, ReadsAndWritesAtTheFileOffsetNeverRunOnTheSubmittingThread) {
  EXPECT_EQ(RunOnCaller(std::chrono::microseconds(0), 20, 100'000'000, 4096, proto::Op::kWrite), 0);
  EXPECT_EQ(RunOnCaller(std::chrono::microseconds(0), 20, 100'000'000, 4096, proto::Op::kRead), 0);
}

TEST(Dispatcher, ZeroBoundNeverRunsOnTheSubmittingThread) {
  EXPECT_EQ(RunOnCaller(std::chrono::microseconds(0), 10, 0), 0);
}

// Workers that spin for work before sleeping lose no wake-up: whether a submission finds the
// spinning worker, a sleeping one or none idle, every request runs. Four submitting threads,
// each waiting for its own requests (as clients do), so that workers keep going idle and
// being woken; dispatches take 0 to 30 us of real time.
TEST(Dispatcher, SpinningWorkersRunEverySubmission) {
  for (int64_t spin_ns : {int64_t{1'000}, int64_t{50'000}, int64_t{5'000'000}}) {
    sched::RealClock clock;
    std::atomic<int> done{0};
    Dispatcher d(Fifo(), &clock, 4, /*inline_max_ns=*/0, spin_ns,
                 [&](const sched::Dispatch&, Work* const*, size_t n_works, int* results) {
                   std::this_thread::sleep_for(std::chrono::microseconds(n_works % 2 ? 30 : 0));
                   for (size_t i = 0; i < n_works; ++i) results[i] = 0;
                   done.fetch_add(static_cast<int>(n_works));
                 });
    constexpr int kThreads = 4;
    constexpr int kEach = 500;
    std::vector<std::thread> submitters;
    for (int t = 0; t < kThreads; ++t) {
      submitters.emplace_back([&, t] {
        for (int i = 0; i < kEach; ++i) {
          const int before = done.load();
          d.Submit(Write(static_cast<uint64_t>(t * kEach + i) * 4096, 4096, proto::Op::kPwrite),
                   /*may_run_inline=*/false);
          // Waits for some progress, so that workers go idle between requests.
          const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (done.load() == before && std::chrono::steady_clock::now() < give_up) {
            std::this_thread::yield();
          }
        }
      });
    }
    for (auto& th : submitters) th.join();
    EXPECT_TRUE(d.DrainUntil(std::chrono::steady_clock::now() + std::chrono::seconds(10)))
        << "spin " << spin_ns << " ns: a submission was never run";
    d.Stop();
    EXPECT_EQ(done.load(), kThreads * kEach) << "spin " << spin_ns << " ns";
  }
}

}  // namespace
}  // namespace iorelay::daemon
