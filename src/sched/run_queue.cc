// RunQueue: ordered maps only, so every operation is O(log n) per request touched.
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

QueueKey KeyOf(const Request& r, uint64_t seq) {
  return QueueKey{r.file.dev, r.file.ino, r.op, r.merge_class, r.offset, seq};
}

RunQueue::Iter RunQueue::Add(const Request& r, uint64_t seq, uint64_t tag) {
  Iter it = map_.emplace(KeyOf(r, seq), Queued{r, seq, tag}).first;
  if (track_arrival_) by_arrival_.emplace(seq, it);
  bytes_ += r.length;
  return it;
}

RunQueue::Iter RunQueue::Oldest() {
  return by_arrival_.empty() ? map_.end() : by_arrival_.begin()->second;
}

void RunQueue::Erase(Iter it) {
  bytes_ -= it->second.req.length;
  if (track_arrival_) by_arrival_.erase(it->second.seq);
  map_.erase(it);
}

RunQueue::Iter RunQueue::StartingAt(const QueueKey& stream, uint64_t offset) {
  QueueKey probe = stream;
  probe.offset = offset;
  probe.seq = 0;
  Iter it = map_.lower_bound(probe);
  if (it == map_.end() || !it->first.SameStream(stream) || it->first.offset != offset) {
    return map_.end();
  }
  return it;
}

uint64_t RunQueue::TakeRun(Iter start, uint64_t budget_bytes, const DispatchLimits& limits,
                           Dispatch* out, std::vector<Queued>* taken) {
  const QueueKey stream = start->first;
  const Request& first = start->second.req;
  out->file = first.file;
  out->op = first.op;
  out->offset = first.offset;
  out->overlapping = false;
  out->request_ids.clear();
  out->request_ids.push_back(first.id);
  uint64_t length = first.length;
  bool mergeable = first.mergeable;
  if (taken) taken->push_back(start->second);
  Erase(start);
  const uint64_t cap = std::min(budget_bytes, limits.max_bytes);
  while (mergeable && out->request_ids.size() < limits.max_requests && length < cap) {
    Iter next = StartingAt(stream, out->offset + length);
    if (next == map_.end() || !next->second.req.mergeable) break;
    if (length + next->second.req.length > cap) break;
    if (next->second.req.length == 0) break;  // zero-length requests are dispatched alone
    out->request_ids.push_back(next->second.req.id);
    length += next->second.req.length;
    if (taken) taken->push_back(next->second);
    Erase(next);
  }
  out->length = length;
  return length;
}

RunQueue::Iter RunQueue::AtOrAfter(const QueueKey& cursor) {
  Iter it = map_.lower_bound(cursor);
  return it == map_.end() ? map_.begin() : it;
}

uint64_t RunQueue::ContiguousBytesAt(const QueueKey& stream, uint64_t offset,
                                     uint64_t limit) const {
  uint64_t total = 0;
  QueueKey probe = stream;
  probe.seq = 0;
  while (total < limit) {
    probe.offset = offset + total;
    auto it = map_.lower_bound(probe);
    if (it == map_.end() || !it->first.SameStream(stream) || it->first.offset != probe.offset ||
        !it->second.req.mergeable || it->second.req.length == 0) {
      break;
    }
    total += it->second.req.length;
  }
  return total;
}

}  // namespace iorelay::sched
