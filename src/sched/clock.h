// Time for pure policy code: schedulers read an injected Clock, so the same code runs on
// real time in the daemon and on virtual time in the simulator and in tests.
#pragma once

#include <cstdint>

#include "common/monotonic.h"

namespace iorelay::sched {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic nanoseconds since an arbitrary origin.
  virtual int64_t NowNs() const = 0;
};

class RealClock final : public Clock {
 public:
  int64_t NowNs() const override { return MonotonicNs(); }
};

// Virtual time that moves only when told to. Not thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ns = 0) : now_ns_(start_ns) {}
  int64_t NowNs() const override { return now_ns_; }
  void Set(int64_t now_ns) { now_ns_ = now_ns; }
  void Advance(int64_t delta_ns) { now_ns_ += delta_ns; }

 private:
  int64_t now_ns_;
};

}  // namespace iorelay::sched
