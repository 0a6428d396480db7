// When an idle worker spins for its next dispatch (--worker-spin): a spin buys a wake-up avoided
// (a futex wake by the submitting loop, a sleep and a wake of the worker, tens of microseconds on
// a virtual machine) when the next dispatch for a worker comes within the spin's window; it
// costs the CPU it burns when none comes, and when the machine has more runnable threads than
// cores it takes that CPU from threads that have work (the loops, the clients). Policy only: the
// caller measures the time and the runnable threads.
#pragma once

#include <algorithm>
#include <cstdint>

namespace iorelay::daemon {

class WorkerSpinRule {
 public:
  enum class Mode {
    kAlways,    // every idle worker spins (one at a time), as long as the window
    kAdaptive,  // only while the mean idle gap is below the window and cores are not short
  };

  // `window_ns` 0: never spin.
  WorkerSpinRule(int64_t window_ns, Mode mode) : window_ns_(window_ns), mode_(mode) {}

  // The workers have nothing to run from `now_ns` (a gap opens, unless one is open).
  void Idle(int64_t now_ns) {
    if (!gap_open_) {
      gap_open_ = true;
      idle_since_ns_ = now_ns;
    }
  }
  // A dispatch for a worker at `now_ns`: the open gap, if any, ends. Each gap weighs 1/8 in
  // the mean, counted at most twice the window (a spin could not have caught it either way, so
  // one long pause moves the mean by a bounded step).
  void Work(int64_t now_ns) {
    if (!gap_open_) return;
    gap_open_ = false;
    const int64_t gap = std::clamp<int64_t>(now_ns - idle_since_ns_, 0, 2 * window_ns_);
    mean_gap_ns_ += (gap - mean_gap_ns_) / 8;
  }
  // Whether an idle worker spins now, with `runnable` threads runnable on the machine (-1:
  // unknown) and `cores` CPUs for this process.
  bool ShouldSpin(int runnable, int cores) const {
    if (window_ns_ <= 0) return false;
    if (mode_ == Mode::kAlways) return true;
    if (mean_gap_ns_ >= window_ns_) return false;
    return runnable < 0 || runnable <= cores;
  }

  // Whether a gap is open (the caller need not read the clock for Work otherwise).
  bool gap_open() const { return gap_open_; }
  int64_t window_ns() const { return window_ns_; }
  int64_t mean_gap_ns() const { return mean_gap_ns_; }

 private:
  const int64_t window_ns_;
  const Mode mode_;
  // Starts at 0: the workers spin as they always did until gaps say otherwise.
  int64_t mean_gap_ns_ = 0;
  bool gap_open_ = false;
  int64_t idle_since_ns_ = 0;
};

}  // namespace iorelay::daemon
