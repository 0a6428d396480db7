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
  if (request.op != IoOp::kWrite || pending_.count(request.id)) {
    inner_->Add(request);
    return;
  }
  Pending p;
  p.file = request.file;
  p.offset = request.offset;
  p.length = request.length;
  p.whole_file = !request.mergeable;
  FileWrites& f = files_[FileId{request.file.dev, request.file.ino}];
  for (uint64_t id : f.whole) Depend(id, request.id, &p);
  if (p.whole_file) {
    for (const auto& [off, id] : f.by_offset) Depend(id, request.id, &p);
  } else if (request.length > 0) {
    const uint64_t begin = request.offset;
    const uint64_t end = begin + request.length;
    uint64_t from = begin > f.max_length ? begin - f.max_length : 0;
    for (auto it = f.by_offset.lower_bound(from); it != f.by_offset.end() && it->first < end;
         ++it) {
      const Pending& other = pending_.at(it->second);
      if (other.offset + other.length > begin) Depend(it->second, request.id, &p);
    }
  }
  if (p.whole_file) {
    f.whole.push_back(request.id);
  } else {
    f.by_offset.emplace(request.offset, request.id);
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
  if (it != pending_.end() && it->second.blockers > 0) return;  // never dispatched: ignore
  inner_->Release(request_id, result, duration_ns);
  if (it == pending_.end()) return;
  Pending done = std::move(it->second);
  pending_.erase(it);
  FileId fid{done.file.dev, done.file.ino};
  FileWrites& f = files_[fid];
  if (done.whole_file) {
    f.whole.erase(std::find(f.whole.begin(), f.whole.end(), request_id));
  } else {
    auto [lo, hi] = f.by_offset.equal_range(done.offset);
    for (auto e = lo; e != hi; ++e) {
      if (e->second == request_id) {
        f.by_offset.erase(e);
        break;
      }
    }
  }
  if (f.whole.empty() && f.by_offset.empty()) files_.erase(fid);
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
