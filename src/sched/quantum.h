// The aIOLi quantum rule shared by aioli and mlf: the next quantum follows how much the
// queue could use of the last one. Bounds are in BYTES (the known defect used a count).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "sched/params.h"

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

// The parameters aioli and mlf share, with their defaults.
struct QuantumParams {
  uint64_t quantum = 64 << 10;     // base quantum, bytes
  uint64_t min_quantum = 4 << 10;  // bytes
  uint64_t max_quantum = 4 << 20;  // bytes
  uint64_t idle_streams = 4096;    // state kept for streams with nothing queued (LRU)
  // Where a queue is served from. order=offset (default): its lowest queued offset, so
  // processes that fell behind are served first and the others catch up with them, which
  // keeps a decomposition's requests contiguous. order=elevator: C-SCAN from where the
  // queue's last dispatch ended (bounds the wait of a request behind lower offsets).
  std::string order = "offset";
  bool elevator() const { return order == "elevator"; }
};

// Reads quantum, min_quantum, max_quantum, idle_streams and order into `q` (defaults kept).
inline void ReadQuantumParams(ParamReader* reader, QuantumParams* q) {
  q->quantum = std::max<uint64_t>(1, reader->Bytes("quantum", q->quantum));
  q->min_quantum = std::max<uint64_t>(1, reader->Bytes("min_quantum", q->min_quantum));
  q->max_quantum = reader->Bytes("max_quantum", q->max_quantum);
  q->idle_streams = reader->Count("idle_streams", q->idle_streams);
  q->order = reader->Text("order", q->order);
}

// EINVAL naming `algorithm` when max_quantum < min_quantum or order is unknown.
inline Status CheckQuantumParams(const std::string& algorithm, const QuantumParams& q) {
  if (q.max_quantum < q.min_quantum) {
    return Status::InvalidArgument(algorithm + ": max_quantum must be >= min_quantum");
  }
  if (q.order != "offset" && q.order != "elevator") {
    return Status::InvalidArgument(algorithm + ": order must be offset|elevator");
  }
  return Status::Ok();
}

}  // namespace iorelay::sched
