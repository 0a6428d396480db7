// Monotonic time in nanoseconds since an arbitrary origin, for the daemon's and the client's
// own deadlines and rates (policy code reads an injected sched::Clock instead).
#pragma once

#include <chrono>
#include <cstdint>

namespace iorelay {

inline int64_t MonotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace iorelay
