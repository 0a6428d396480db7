// RunQueue: B-trees over a slab, so every operation is O(log n) per request touched.
#include "sched/run_queue.h"

#include <algorithm>

namespace iorelay::sched {

DispatchLimits ReadLimits(ParamReader* reader) {
  DispatchLimits l;
  l.max_bytes =
      std::max<uint64_t>(1, reader->Bytes("max_dispatch_bytes", kDefaultMaxDispatchBytes));
  l.max_requests = static_cast<uint32_t>(std::clamp<uint64_t>(
      reader->Count("max_dispatch_requests", kDefaultMaxDispatchRequests), 1, 1u << 20));
  return l;
}

RunQueue::Iter RunQueue::Add(const Request& r, uint64_t seq, uint64_t tag) {
  uint32_t slot;
  if (free_.empty()) {
    slot = static_cast<uint32_t>(slab_.size());
    slab_.push_back(Queued{r, seq, tag});
  } else {
    slot = free_.back();
    free_.pop_back();
    slab_[slot] = Queued{r, seq, tag};
  }
  auto s = streams_.try_emplace(StreamOf(KeyOf(r, 0))).first;
  auto i = s->second.emplace(r.offset, slot);
  if (track_arrival_) by_arrival_.emplace_hint(by_arrival_.end(), seq, Arrival{slot, r.arrival_ns});
  bytes_ += r.length;
  ++size_;
  return Iter{s, i};
}

RunQueue::Iter RunQueue::begin() {
  if (streams_.empty()) return end();
  auto s = streams_.begin();
  return Iter{s, s->second.begin()};
}

RunQueue::Iter RunQueue::Oldest() {
  if (by_arrival_.empty()) return end();
  const uint32_t slot = by_arrival_.begin()->second.slot;
  const Request& r = slab_[slot].req;
  auto s = streams_.find(StreamOf(KeyOf(r, 0)));
  auto i = s->second.lower_bound(r.offset);
  while (i->second != slot) ++i;  // among requests at the same offset
  return Iter{s, i};
}

uint64_t RunQueue::TakeRun(Iter start, uint64_t budget_bytes, const DispatchLimits& limits,
                           Dispatch* out, std::vector<Queued>* taken) {
  Inner& inner = start.s->second;
  const Queued& head = slab_[start.i->second];
  const Request& first = head.req;
  out->file = first.file;
  out->op = first.op;
  out->offset = first.offset;
  out->overlapping = false;
  out->request_ids.clear();
  out->request_ids.push_back(first.id);
  uint64_t length = first.length;
  const bool mergeable = first.mergeable;
  if (taken) taken->push_back(head);
  const uint64_t cap = std::min(budget_bytes, limits.max_bytes);
  // The stream is erased from streams_ only after the run: `inner` stays valid meanwhile.
  --size_;
  bytes_ -= first.length;
  if (track_arrival_) by_arrival_.erase(head.seq);
  free_.push_back(start.i->second);
  auto next = inner.erase(start.i);
  while (mergeable && out->request_ids.size() < limits.max_requests && length < cap) {
    // The successor in (offset, seq) order continues the run unless there is a gap or
    // another request at the same offset: look the offset up only then.
    const uint64_t at = out->offset + length;
    if (next == inner.end() || next->first != at) {
      next = inner.lower_bound(at);
      if (next == inner.end() || next->first != at) break;
    }
    const Queued& e = slab_[next->second];
    if (!e.req.mergeable) break;
    if (length + e.req.length > cap) break;
    if (e.req.length == 0) break;  // zero-length requests are dispatched alone
    out->request_ids.push_back(e.req.id);
    length += e.req.length;
    if (taken) taken->push_back(e);
    --size_;
    bytes_ -= e.req.length;
    if (track_arrival_) by_arrival_.erase(e.seq);
    free_.push_back(next->second);
    next = inner.erase(next);
  }
  if (inner.empty()) streams_.erase(start.s);
  if (size_ == 0) {  // the queue emptied: restart at slot 0 (capacity is kept)
    slab_.clear();
    free_.clear();
  }
  out->length = length;
  return length;
}

RunQueue::Iter RunQueue::AtOrAfter(const QueueKey& cursor) {
  // lower_bound over the whole (stream, offset, seq) order, wrapping to the first entry.
  auto s = streams_.lower_bound(StreamOf(cursor));
  if (s != streams_.end() && s->first == StreamOf(cursor)) {
    auto i = s->second.lower_bound(cursor.offset);
    if (i != s->second.end()) return Iter{s, i};
    ++s;
  }
  if (s == streams_.end()) return begin();
  return Iter{s, s->second.begin()};
}

RunQueue::Iter RunQueue::NextWrapping(Iter it) {
  if (++it.i != it.s->second.end()) return it;
  if (++it.s == streams_.end()) return begin();
  return Iter{it.s, it.s->second.begin()};
}

uint64_t RunQueue::ContiguousBytesAt(const QueueKey& stream, uint64_t offset,
                                     uint64_t limit) const {
  uint64_t total = 0;
  auto s = streams_.find(StreamOf(stream));
  if (s == streams_.end()) return 0;
  const Inner& inner = s->second;
  auto it = inner.end();
  while (total < limit) {
    const uint64_t at = offset + total;
    // The successor of the last counted entry usually is the next one: look up otherwise.
    if (it != inner.end()) ++it;
    if (it == inner.end() || it->first != at) {
      it = inner.lower_bound(at);
      if (it == inner.end() || it->first != at) break;
    }
    const Request& r = slab_[it->second].req;
    if (!r.mergeable || r.length == 0) break;
    total += r.length;
  }
  return total;
}

}  // namespace iorelay::sched
