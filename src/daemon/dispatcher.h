// Drives the Scheduler: requests go in, dispatches come out. The submitting thread (a
// connection's event loop) first asks the scheduler itself and runs what it is given, which
// saves two thread hand-offs per request, but only while recent dispatches were fast (a mean
// over the last few of their cost, RunCost, at most `inline_max_ns`): a slow backend call run by
// a loop would keep it from reading, so no queue could form for the scheduler to order and
// merge. A large call at memory speed (a MiB copied to or from the page cache) counts as fast
// by its cost per 64 KiB, up to 4 times the bound in all. Whatever the
// scheduler holds back, and every dispatch while calls are slow, is run by the worker pool.
// At most `slots` dispatches run at once, inline ones included, so requests arriving while
// all slots are busy queue in the scheduler and can be merged. The scheduler alone picks
// what runs.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "common/runnable_threads.h"
#include "daemon/work.h"
#include "daemon/worker_spin_rule.h"
#include "sched/clock.h"
#include "sched/scheduler.h"

namespace iorelay::daemon {

// A dispatch larger than this is never run by the submitting thread (the client's pipelined
// pieces are 1 MiB).
inline constexpr uint64_t kInlineMaxBytes = 1 << 20;

// What a dispatch of `bytes` that took `duration_ns` counts for against the inline bound: its
// time per 64 KiB moved (small dispatches: their time), but at least a quarter of its time.
int64_t RunCost(int64_t duration_ns, uint64_t bytes);

class Dispatcher {
 public:
  // Runs one dispatch: every Work of it gets its backend call and its reply. Returns the
  // result (0 or errno) per work through `results`.
  using Executor =
      std::function<void(const sched::Dispatch&, Work* const* works, size_t n, int* results)>;

  Dispatcher(std::unique_ptr<sched::Scheduler> scheduler, const sched::Clock* clock, int slots,
             int64_t inline_max_ns, int64_t worker_spin_ns, Executor executor,
             WorkerSpinRule::Mode spin_mode = WorkerSpinRule::Mode::kAdaptive);
  ~Dispatcher();

  // Queues `work` (its request id is assigned here). With `may_run_inline`, the calling
  // thread runs the scheduler's next dispatch itself, if there is one now and dispatches have
  // been fast.
  void Submit(std::unique_ptr<Work> work, bool may_run_inline);
  // An application admitted while the daemon runs: its weight goes to the scheduler (under the
  // lock that serialises every scheduler call).
  void AddApp(uint32_t app, uint32_t weight);
  // An application gone for good (its job released or revoked): the scheduler drops what it
  // keeps for it (Scheduler::RemoveApp).
  void RemoveApp(uint32_t app);
  // The applications the scheduler holds something for (Scheduler::AppsHeld), and how many
  // RemoveApp calls there were: the "scheduler_apps" counters of the statistics.
  std::vector<uint32_t> AppsHeld();
  uint64_t apps_removed() const { return apps_removed_.load(std::memory_order_relaxed); }
  // The scheduler's EffectiveConfig() (taken under the lock: some report live state).
  nlohmann::json SchedulerConfig();
  // Blocks until nothing is queued or running.
  void Drain();
  // The same, giving up at `deadline`; false then.
  bool DrainUntil(std::chrono::steady_clock::time_point deadline);
  // Stops the workers (after Drain).
  void Stop();

 private:
  struct Taken {
    sched::Dispatch dispatch;
    std::vector<std::unique_ptr<Work>> works;
  };
  // With mu_ held: asks the scheduler; on a dispatch takes a slot and its works.
  sched::Decision TakeLocked(Taken* t, bool inline_run) REQUIRES(mu_);
  // Whether a submitting thread (an event loop) may run `t` itself: the scheduler's next
  // dispatch need not be the request just submitted, so this is decided on what was taken.
  // Not when it moves more than kInlineMaxBytes, nor when it holds a read or write at the
  // description's offset, which waits for the offset's lock while a worker holds it for a
  // whole backend call, nor a piped read, which waits likewise for its connection's pipe.
  static bool RunsOnLoop(const Taken& t);
  // Without mu_: executes, then releases (takes mu_).
  void Run(Taken* t, bool inline_run) EXCLUDES(mu_);
  bool QuietLocked() const REQUIRES(mu_) {
    return free_slots_ == slots_ && inline_running_ == 0 && queued_.empty();
  }
  void WorkerLoop();
  // With mu_ held: gets a worker to look for work, the spinning one if it has not been
  // signalled yet (no system call), else a sleeping one.
  void WakeWorkerLocked() REQUIRES(mu_);
  // With mu_ held (released while spinning): this worker becomes the spinning one and looks for
  // a signal for up to the spin's window. Whether it was signalled.
  bool SpinForWork() REQUIRES(mu_);
  // With mu_ held: whether an idle worker spins now (spin_rule_, with the machine's runnable
  // threads as last sampled by SampleRunnable).
  bool SpinNowLocked() const REQUIRES(mu_);
  // Without mu_ (it may read /proc): refreshes the runnable count, at most every 10 ms.
  void SampleRunnable();

  const sched::Clock* clock_;
  Executor executor_;
  const int slots_;
  Mutex mu_;
  CondVar work_cv_;                                                 // workers wait for a dispatch
  CondVar drain_cv_;                                                // Drain waits for quiet
  std::unique_ptr<sched::Scheduler> scheduler_ PT_GUARDED_BY(mu_);  // set once, then const
  std::unordered_map<uint64_t, std::unique_ptr<Work>> queued_ GUARDED_BY(mu_);
  // Dispatches a submitting thread took but may not run (RunsOnLoop): a worker runs them
  // first. Each holds its slot already.
  std::deque<Taken> handoff_ GUARDED_BY(mu_);
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  int free_slots_ GUARDED_BY(mu_);
  int inline_running_ GUARDED_BY(mu_) = 0;
  const int64_t inline_max_ns_;
  int64_t mean_run_ns_ GUARDED_BY(mu_) = 0;  // each dispatch's RunCost weighs 1/8
  bool stop_ GUARDED_BY(mu_) = false;
  WorkerSpinRule spin_rule_ GUARDED_BY(mu_);
  const int cores_;
  RunnableSample runnable_;                // the machine's runnable threads (SampleRunnable)
  bool spinning_ GUARDED_BY(mu_) = false;  // a worker spins in SpinForWork
  bool spinner_signalled_ GUARDED_BY(mu_) = false;  // ... and has been given a wake-up
  std::atomic<uint64_t> work_signals_{0};           // what the spinning worker watches
  std::atomic<uint64_t> apps_removed_{0};
  std::vector<std::thread> workers_;
};

}  // namespace iorelay::daemon
