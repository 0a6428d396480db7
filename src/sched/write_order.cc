// WriteOrderGuard: dependencies are found once at Add with an offset-ordered index per
// file, and resolved at Release by request id.
#include "sched/write_order.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace iorelay::sched {

void WriteOrderGuard::Depend(uint64_t earlier, uint64_t later, Pending* p) {
  auto it = pending_.find(earlier);
  if (it == pending_.end()) return;
  it->second.dependents.push_back(later);
  ++p->blockers;
}

void WriteOrderGuard::Add(const Request& request) {
  if (request.op != IoOp::kWrite) {
    inner_->Add(request);
    return;
  }
  if (pending_.contains(request.id)) {  // an id already tracked: not ordered again
    inner_->Add(request);
    return;
  }
  Pending p;
  p.file = FileId{request.file.dev, request.file.ino};
  p.offset = request.offset;
  p.whole_file = !request.mergeable;
  FileWrites& f = files_[p.file];
  for (uint64_t id : f.whole) Depend(id, request.id, &p);
  // Where the scan stopped: for a write that overlaps nothing (the common case) the new
  // entry goes right before it, so the insert does not walk the tree again.
  auto hint = f.by_offset.end();
  if (p.whole_file) {
    for (const auto& [key, end] : f.by_offset) Depend(key.second, request.id, &p);
  } else if (request.length > 0) {
    const uint64_t begin = request.offset;
    const uint64_t end = begin + request.length;
    const uint64_t from = begin > f.max_length ? begin - f.max_length : 0;
    hint = f.by_offset.lower_bound({from, 0});
    for (; hint != f.by_offset.end() && hint->first.first < end; ++hint) {
      if (hint->second > begin) Depend(hint->first.second, request.id, &p);
    }
  }
  if (p.whole_file) {
    f.whole.push_back(request.id);
  } else {
    f.by_offset.emplace_hint(hint, std::pair{request.offset, request.id},
                             request.offset + request.length);
    f.max_length = std::max(f.max_length, request.length);
  }
  const bool hold = p.blockers > 0;
  pending_.emplace(request.id, std::move(p));
  if (hold) {
    held_.emplace(request.id, request);
  } else {
    inner_->Add(request);
  }
}

void WriteOrderGuard::Release(uint64_t request_id, int result, int64_t duration_ns) {
  auto it = pending_.find(request_id);
  if (it == pending_.end()) {
    inner_->Release(request_id, result, duration_ns);
    return;
  }
  if (it->second.blockers > 0) return;  // never dispatched: ignore
  inner_->Release(request_id, result, duration_ns);
  Pending done = std::move(it->second);
  pending_.erase(it);
  auto fit = files_.find(done.file);
  FileWrites& f = fit->second;
  if (done.whole_file) {
    f.whole.erase(std::find(f.whole.begin(), f.whole.end(), request_id));
  } else {
    f.by_offset.erase(std::pair{done.offset, request_id});
  }
  if (f.whole.empty() && f.by_offset.empty()) files_.erase(fit);
  for (uint64_t id : done.dependents) {
    auto d = pending_.find(id);
    if (d == pending_.end() || d->second.blockers == 0) continue;
    if (--d->second.blockers == 0) {
      auto h = held_.find(id);
      inner_->Add(h->second);
      held_.erase(h);
    }
  }
}

nlohmann::json WriteOrderGuard::EffectiveConfig() const { return inner_->EffectiveConfig(); }

}  // namespace iorelay::sched
