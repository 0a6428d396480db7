// Spinning before sleeping (docs/interposer.md, Waiting for replies): a thread that waits for a
// reply first looks for it for a while, yielding the CPU after every look, so that a reply that
// comes soon costs neither the daemon a wake-up nor this thread a sleep. A wait that the reply
// outlasts makes the next ones sleep at once, more of them the more misses come in a row, so
// threads whose replies take long (a slow backend, a queue) rarely spin. One per connection
// (a connection is used by one thread at a time); no system call but sched_yield.
#pragma once

#include <sched.h>

#include <algorithm>
#include <cstdint>

#include "common/monotonic.h"

namespace iorelay::client {

// Adaptive spinning (IORELAY_SPIN_ADAPT=on): a thread does not spin while the machine has more
// runnable threads than this process may use CPUs (/proc/loadavg's running count against
// sched_getaffinity), since then its spin takes a CPU from a thread that has work, the
// daemon's included. Process-wide: the client sets it once at creation.
void SetSpinAdaptive(bool on);
// Whether spinning is off for now: adaptive, and the running count (read at most every 10 ms
// by any thread of the process) exceeds the CPUs.
bool SpinPaused();

class SpinWait {
 public:
  // 0: never spin.
  void set_us(int us) { spin_ns_ = int64_t{us} * 1000; }

  // Calls `ready` until it returns true (then true) or the spin's time is over (false), with a
  // sched_yield after every call: even where a look is one load from shared memory, yielding
  // after each lets the daemon's loops run soonest when threads outnumber cores (measured
  // against a yield every 64 looks: docs/interposer.md, Waiting for replies). Where a core is
  // free the yield returns at once.
  template <class Ready>
  bool Spin(Ready&& ready) {
    if (spin_ns_ == 0) return false;
    if (SpinPaused()) return false;
    if (skipped_ > 0) {
      --skipped_;
      return false;
    }
    int64_t deadline = 0;
    for (;;) {
      if (ready()) {
        misses_ = 0;
        return true;
      }
      const int64_t now = MonotonicNs();
      if (deadline == 0) {
        deadline = now + spin_ns_;
      } else if (now >= deadline) {
        break;
      }
      sched_yield();
    }
    // Missed: the next 2^k - 1 waits sleep at once (k the misses in a row, at most kMaxMisses,
    // so that even then one wait in 2^kMaxMisses looks whether replies became quick again).
    misses_ = std::min(misses_ + 1, kMaxMisses);
    skipped_ = (1u << misses_) - 1;
    return false;
  }

 private:
  static constexpr unsigned kMaxMisses = 6;

  int64_t spin_ns_ = 0;
  unsigned misses_ = 0;   // spins in a row that the reply outlasted
  unsigned skipped_ = 0;  // waits left that sleep without spinning
};

}  // namespace iorelay::client
