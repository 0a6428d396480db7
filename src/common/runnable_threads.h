// How many threads the machine has runnable, against the CPUs this process may use: what a
// thread about to spin (a client waiting for a reply, an idle daemon worker) asks first, since
// a spin where runnable threads outnumber the cores takes a CPU from a thread that has work.
#pragma once

#include <atomic>
#include <cstdint>

namespace iorelay {

// The CPUs this process may run on (sched_getaffinity; 1 if it cannot tell).
int AllowedCpus();
// /proc/loadavg's running count ("0.50 0.40 0.30 RUNNING/TOTAL LASTPID"), this thread
// included; -1 if unread. Raw system calls (safe inside the interposer).
int RunningThreads();

// RunningThreads() read at most once per period by whichever thread asks first; the others
// get the last count. Thread-safe.
class RunnableSample {
 public:
  static constexpr int64_t kPeriodNs = 10'000'000;

  // The count, read again when the last reading is older than kPeriodNs at `now_ns`.
  int Get(int64_t now_ns);
  // The count of the last reading (-1 before the first), without reading again.
  int Last() const { return running_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> sampled_ns_{INT64_MIN / 2};
  std::atomic<int> running_{-1};
};

}  // namespace iorelay
