// The aIOLi quantum rule shared by aioli and mlf: the next quantum follows how much the
// queue could use of the last one. Bounds are in BYTES (the known defect used a count).
#pragma once

#include <algorithm>
#include <cstdint>

namespace iorelay::sched {

// demand / quantum >= 175% -> x2, >= 125% -> x1.5, >= 75% -> same, else /2; then clamped
// to [min_bytes, max_bytes].
inline uint64_t AdaptQuantum(uint64_t quantum, uint64_t demand, uint64_t min_bytes,
                             uint64_t max_bytes) {
  uint64_t next = quantum;
  if (demand * 4 >= quantum * 7) {
    next = quantum * 2;
  } else if (demand * 4 >= quantum * 5) {
    next = quantum + quantum / 2;
  } else if (demand * 4 >= quantum * 3) {
    next = quantum;
  } else {
    next = quantum / 2;
  }
  return std::clamp(next, min_bytes, max_bytes);
}

}  // namespace iorelay::sched
