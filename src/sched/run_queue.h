// The building block of the merging schedulers: queued requests ordered by (file, op,
// merge_class, offset), with an arrival index, and removal of a contiguous run as one Dispatch.
#pragma once

#include <absl/container/btree_map.h>

#include <compare>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "sched/params.h"
#include "sched/scheduler.h"

namespace iorelay::sched {

// Caps on one dispatch (see kDefaultMaxDispatchBytes).
struct DispatchLimits {
  uint64_t max_bytes = kDefaultMaxDispatchBytes;
  uint32_t max_requests = kDefaultMaxDispatchRequests;
};
// Reads max_dispatch_bytes and max_dispatch_requests (at least 1 each).
DispatchLimits ReadLimits(ParamReader* reader);

struct QueueKey {
  uint64_t dev = 0;
  uint64_t ino = 0;
  IoOp op = IoOp::kRead;
  uint32_t merge_class = 0;
  uint64_t offset = 0;
  uint64_t seq = 0;  // arrival sequence, unique: makes keys unique
  friend auto operator<=>(const QueueKey&, const QueueKey&) = default;
  bool SameStream(const QueueKey& o) const {
    return dev == o.dev && ino == o.ino && op == o.op && merge_class == o.merge_class;
  }
  template <typename H>
  friend H AbslHashValue(H h, const QueueKey& k) {
    return H::combine(std::move(h), k.dev, k.ino, k.op, k.merge_class, k.offset, k.seq);
  }
};

struct Queued {
  Request req;
  uint64_t seq = 0;
  uint64_t tag = 0;  // algorithm-specific (aioli/mlf: the pass at which it was queued)
};

inline QueueKey KeyOf(const Request& r, uint64_t seq) {
  return QueueKey{r.file.dev, r.file.ino, r.op, r.merge_class, r.offset, seq};
}
// The key of a (file, op, merge_class) stream: offset and seq zeroed.
inline QueueKey StreamOf(QueueKey k) {
  k.offset = 0;
  k.seq = 0;
  return k;
}
// The number of doublings of `base` needed to reach `length` (0 when length <= base).
inline uint32_t DoublingsToCover(uint64_t length, uint64_t base) {
  uint32_t k = 0;
  while (k < 63 && (base << k) < length) ++k;
  return k;
}

// Queued requests live in a slab (a vector with a free list) indexed by a 32-bit slot. The
// order is two-level: a small ordered map of streams (file, op, merge_class), each with a
// B-tree multimap offset -> slot. Requests at the same offset stay in arrival order, as
// the multimap inserts after its equal keys and every scheduler adds in increasing seq, so
// the order is (offset, seq). Entries are 16 bytes with an integer key: a 256-byte node
// holds fifteen, searched linearly, and walking a stream in offset order stays inside one
// node instead of chasing one heap node per request. Iterators are invalidated by every
// Add and every removal.
class RunQueue {
 public:
  using Inner = absl::btree_multimap<uint64_t, uint32_t>;  // offset -> slot
  using Streams = std::map<QueueKey, Inner>;               // stream keys: offset and seq zero
  struct Iter {
    Streams::iterator s;
    Inner::iterator i;  // default-constructed when s is the end
    const QueueKey& stream() const { return s->first; }
    friend bool operator==(const Iter& a, const Iter& b) { return a.s == b.s && a.i == b.i; }
  };

  // `track_arrival`: keep the arrival index that Oldest() needs (one more tree per request).
  explicit RunQueue(bool track_arrival = false) : track_arrival_(track_arrival) {}

  // `seq` must be greater than every seq added before (the arrival order).
  Iter Add(const Request& r, uint64_t seq, uint64_t tag = 0);
  // The request an iterator points to (valid until the next Add or removal).
  const Queued& at(Iter it) const { return slab_[it.i->second]; }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  uint64_t bytes() const { return bytes_; }
  Iter begin();
  Iter end() { return Iter{streams_.end(), {}}; }
  // The request queued first (smallest seq); end() when empty. Needs track_arrival.
  Iter Oldest();
  // That request's (arrival_ns, seq), without touching the request. Not empty; needs
  // track_arrival.
  std::pair<int64_t, uint64_t> OldestArrival() const {
    const auto& [seq, a] = *by_arrival_.begin();
    return {a.arrival_ns, seq};
  }
  // Removes *start and then each queued request that starts exactly where the run ends
  // (same file/op/merge_class, both mergeable) while the run stays within `budget_bytes`,
  // limits.max_bytes and limits.max_requests; *start is always taken. Fills `out` (its
  // request_ids in offset order), appends the removed entries to `taken` if given, and
  // returns the run's length in bytes.
  uint64_t TakeRun(Iter start, uint64_t budget_bytes, const DispatchLimits& limits, Dispatch* out,
                   std::vector<Queued>* taken = nullptr);
  // Bytes of queued mergeable requests forming a contiguous run that starts exactly at
  // `offset` in `stream`'s file/op/merge_class, counting at most up to `limit` bytes.
  uint64_t ContiguousBytesAt(const QueueKey& stream, uint64_t offset, uint64_t limit) const;
  // Elevator order (C-SCAN): the first request at or after `cursor` (its stream and offset;
  // its seq is ignored), else the first one.
  Iter AtOrAfter(const QueueKey& cursor);
  // The request after `it` in the same order, wrapping to the first one. Not empty.
  Iter NextWrapping(Iter it);

 private:
  Streams streams_;
  std::vector<Queued> slab_;
  std::vector<uint32_t> free_;  // free slots of slab_
  size_t size_ = 0;
  bool track_arrival_;
  struct Arrival {
    uint32_t slot;
    int64_t arrival_ns;
  };
  absl::btree_map<uint64_t, Arrival> by_arrival_;  // seq -> where and when
  uint64_t bytes_ = 0;
};

}  // namespace iorelay::sched
