// WriteOrderGuard: dependencies are found once at Add with an offset-ordered index per
// file, and resolved at Release by request id.
#include "sched/write_order.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace iorelay::sched {

void WriteOrderGuard::Depend(uint64_t earlier, uint64_t later, Pending* p) {
  auto it = pending_.find(earlier);
  if (it == pending_.end()) return;
  it->second.has_dependents = true;
  dependents_[earlier].push_back(later);
  ++p->blockers;
}

void WriteOrderGuard::Add(const Request& request) {
  if (request.op != IoOp::kWrite) {
    inner_->Add(request);
    return;
  }
  auto [it, inserted] = pending_.try_emplace(request.id);
  if (!inserted) {  // an id already tracked: not ordered again
    inner_->Add(request);
    return;
  }
  Pending& p = it->second;  // stays valid: nothing below inserts into pending_
  const FileId file{request.file.dev, request.file.ino};
  std::unique_ptr<FileWrites>& owned = files_[file];
  if (owned == nullptr) {
    owned = std::make_unique<FileWrites>();
    owned->id = file;
  }
  FileWrites& f = *owned;
  p.file = &f;
  p.offset = request.offset;
  p.whole_file = !request.mergeable;
  for (uint64_t id : f.whole) Depend(id, request.id, &p);
  // Where the scan stopped: for a write that overlaps nothing (the common case) the new
  // entry goes right before it, so the insert does not walk the tree again.
  auto hint = f.by_offset.end();
  if (p.whole_file) {
    for (const auto& [offset, range] : f.by_offset) Depend(range.id, request.id, &p);
  } else if (request.length > 0) {
    const uint64_t begin = request.offset;
    const uint64_t end = begin + request.length;
    const uint64_t from = begin > f.max_length ? begin - f.max_length : 0;
    hint = f.by_offset.lower_bound(from);
    for (; hint != f.by_offset.end() && hint->first < end; ++hint) {
      if (hint->second.end > begin) Depend(hint->second.id, request.id, &p);
    }
  }
  if (p.whole_file) {
    f.whole.push_back(request.id);
  } else {
    f.by_offset.emplace_hint(hint, request.offset,
                             Range{request.offset + request.length, request.id});
    f.max_length = std::max(f.max_length, request.length);
  }
  if (p.blockers > 0) {
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
  const Pending done = it->second;
  pending_.erase(it);
  FileWrites& f = *done.file;
  if (done.whole_file) {
    f.whole.erase(std::find(f.whole.begin(), f.whole.end(), request_id));
  } else {
    auto e = f.by_offset.lower_bound(done.offset);
    while (e->second.id != request_id) ++e;
    f.by_offset.erase(e);
  }
  if (f.whole.empty() && f.by_offset.empty()) {
    const FileId file = f.id;
    files_.erase(file);
  }
  if (!done.has_dependents) return;
  auto dit = dependents_.find(request_id);
  const std::vector<uint64_t> dependents = std::move(dit->second);
  dependents_.erase(dit);
  for (uint64_t id : dependents) {
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
