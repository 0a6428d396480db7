// WriteOrderGuard: dependencies are found once at Add with an offset-ordered index per
// file, and resolved at Release of the earlier write, which Next recorded as in flight.
#include "sched/write_order.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace iorelay::sched {

bool WriteOrderGuard::Tracked(const FileWrites& f, uint64_t offset, uint64_t id) const {
  for (auto e = f.by_offset.lower_bound(offset); e != f.by_offset.end() && e->first == offset;
       ++e) {
    if (e->second.id == id) return true;
  }
  return f.covered.contains(id);
}

bool WriteOrderGuard::FindOverlaps(FileWrites& f, uint64_t begin, uint64_t end, Earlier* earlier,
                                   Index::iterator* hint) {
  const size_t had = earlier->size();
  const uint64_t from = begin > f.max_length ? begin - f.max_length : 0;
  int visited = 0;
  bool contains_one = false;
  auto e = f.by_offset.lower_bound(from);
  for (; e != f.by_offset.end() && e->first < end; ++e) {
    if (++visited > kMaxOverlapScan) {
      earlier->resize(had);
      return false;
    }
    if (e->second.end > begin) {
      earlier->push_back(e->second.id);
      contains_one |= e->first >= begin && e->second.end <= end;
    }
  }
  if (contains_one) {
    // A later write overlapping one this write contains overlaps this one too: looking up
    // this one is enough from now on.
    for (e = f.by_offset.lower_bound(begin); e != f.by_offset.end() && e->first < end;) {
      if (e->second.end > end) {
        ++e;
        continue;
      }
      f.covered.emplace(e->second.id, Extent{e->first, e->second.end});
      e = f.by_offset.erase(e);
    }
  }
  *hint = e;
  return true;
}

void WriteOrderGuard::BecomeBarrier(FileWrites& f, const Request& request, Earlier* earlier) {
  for (const auto& [offset, r] : f.by_offset) f.covered.emplace(r.id, Extent{offset, r.end});
  f.by_offset.clear();
  f.max_length = 0;
  for (const auto& [offset, id] : f.ranged_since_barrier) {
    if (f.covered.contains(id)) earlier->push_back(id);
  }
  f.ranged_since_barrier.clear();
  f.last_barrier = request.id;
  if (request.mergeable) {
    f.covered.emplace(request.id, Extent{request.offset, request.offset + request.length});
  } else {
    f.whole.insert(request.id);
  }
}

void WriteOrderGuard::Add(const Request& request) {
  // Reads are not ordered, and a positional write of no bytes changes nothing.
  if (request.op != IoOp::kWrite || (request.mergeable && request.length == 0)) {
    inner_->Add(request);
    return;
  }
  const FileId file{request.file.dev, request.file.ino};
  std::unique_ptr<FileWrites>& owned = files_[file];
  if (owned == nullptr) {
    owned = std::make_unique<FileWrites>();
    owned->id = file;
  }
  FileWrites& f = *owned;
  Earlier earlier;
  // The latest barrier comes after every earlier write of the file not found below.
  if (f.last_barrier != 0) earlier.push_back(f.last_barrier);
  // Where the scan stopped: for a write that overlaps nothing (the common case) the new
  // entry goes right before it, so the insert does not walk the tree again.
  auto hint = f.by_offset.end();
  const uint64_t end = request.offset + request.length;
  if (!request.mergeable ||
      (request.length > 0 && !FindOverlaps(f, request.offset, end, &earlier, &hint))) {
    BecomeBarrier(f, request, &earlier);
  } else {
    f.by_offset.emplace_hint(hint, request.offset, Range{end, request.id});
    f.max_length = std::max(f.max_length, request.length);
    f.ranged_since_barrier.emplace_back(request.offset, request.id);
  }
  for (uint64_t id : earlier) dependents_[id].push_back(request.id);
  dependencies_ += earlier.size();
  ++tracked_writes_;
  if (!earlier.empty()) {
    held_.emplace(request.id, Held{request, static_cast<uint32_t>(earlier.size())});
  } else {
    inner_->Add(request);
  }
}

Decision WriteOrderGuard::Next(int64_t now_ns, Dispatch* out) {
  const Decision d = inner_->Next(now_ns, out);
  if (d.kind == Decision::Kind::kDispatch && out->op == IoOp::kWrite) TrackDispatch(*out);
  return d;
}

void WriteOrderGuard::TrackDispatch(const Dispatch& d) {
  auto fit = files_.find(FileId{d.file.dev, d.file.ino});
  if (fit == files_.end()) return;  // not a write the guard saw (cannot happen)
  FileWrites& f = *fit->second;
  // A write's requests tile the dispatch in order: each starts where the previous ended.
  uint64_t at = d.offset;
  auto e = f.by_offset.end();
  for (uint64_t id : d.request_ids) {
    if (f.whole.contains(id)) {
      in_flight_[id] = InFlight{&f, 0, true};  // appends are dispatched alone
      continue;
    }
    if (d.length == 0) continue;  // a zero-length write (dispatched alone): not tracked
    if (auto c = f.covered.find(id); c != f.covered.end()) {
      in_flight_[id] = InFlight{&f, c->second.offset, false};
      at = c->second.end;
      continue;
    }
    // Usually the next entry; otherwise look the offset up (others may share it).
    if (e == f.by_offset.end() || e->first != at || e->second.id != id) {
      e = f.by_offset.lower_bound(at);
      while (e != f.by_offset.end() && e->first == at && e->second.id != id) ++e;
      if (e == f.by_offset.end() || e->first != at) {  // not where the dispatch says
        e = std::find_if(f.by_offset.begin(), f.by_offset.end(),
                         [id](const auto& entry) { return entry.second.id == id; });
        if (e == f.by_offset.end()) continue;  // an id the guard never saw
      }
    }
    in_flight_[id] = InFlight{&f, e->first, false};
    at = e->second.end;
    ++e;
  }
}

void WriteOrderGuard::Release(uint64_t request_id, int result, int64_t duration_ns) {
  auto it = in_flight_.find(request_id);
  if (it == in_flight_.end()) {
    if (held_.contains(request_id)) return;  // never dispatched: ignore
    inner_->Release(request_id, result, duration_ns);
    return;
  }
  inner_->Release(request_id, result, duration_ns);
  const InFlight done = it->second;
  in_flight_.erase(it);
  --tracked_writes_;
  FileWrites& f = *done.file;
  if (f.last_barrier == request_id) f.last_barrier = 0;
  if (done.whole_file) {
    f.whole.erase(request_id);
  } else if (f.covered.erase(request_id) == 0) {
    auto e = f.by_offset.lower_bound(done.offset);
    while (e->second.id != request_id) ++e;  // (Add moves entries only into covered)
    f.by_offset.erase(e);
  }
  // Released entries of ranged_since_barrier are dropped when they outnumber tracked ones.
  if (f.ranged_since_barrier.size() > 2 * (f.by_offset.size() + f.covered.size()) + 16) {
    std::erase_if(f.ranged_since_barrier,
                  [&](const auto& r) { return !Tracked(f, r.first, r.second); });
  }
  auto dit = dependents_.find(request_id);
  if (dit != dependents_.end()) {
    const std::vector<uint64_t> dependents = std::move(dit->second);
    dependents_.erase(dit);
    dependencies_ -= dependents.size();
    for (uint64_t id : dependents) {
      auto h = held_.find(id);
      if (h == held_.end() || --h->second.blockers > 0) continue;
      inner_->Add(h->second.request);
      held_.erase(h);
    }
  }
  if (f.whole.empty() && f.by_offset.empty() && f.covered.empty()) {
    const FileId file = f.id;
    files_.erase(file);
  }
}

nlohmann::json WriteOrderGuard::EffectiveConfig() const { return inner_->EffectiveConfig(); }

}  // namespace iorelay::sched
