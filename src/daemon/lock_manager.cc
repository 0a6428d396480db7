// Range arithmetic of POSIX record locks: conflicts, splitting and merging.
#include "daemon/lock_manager.h"

#include <algorithm>
#include <iterator>

namespace iorelay::daemon {
namespace {

bool Overlap(const LockSpan& a, const LockSpan& b) { return a.start < b.end && b.start < a.end; }

}  // namespace

Result<LockSpan> MakeSpan(int64_t start, int64_t length) {
  LockSpan s;
  if (start < 0) return Status::InvalidArgument("negative lock start");
  if (length < 0) {
    // start >= 0 here, so start + length cannot overflow once length > INT64_MIN.
    if (length == std::numeric_limits<int64_t>::min() || start + length < 0) {
      return Status::InvalidArgument("lock range before offset 0");
    }
    s.start = start + length;
    s.end = start;
  } else {
    // A lock at the last offset would be the empty range [kLockEof, kLockEof) here.
    if (start == kLockEof) return Status::FromErrno(EOVERFLOW, "lock range overflows");
    s.start = start;
    if (length == 0) {
      s.end = kLockEof;
    } else {
      if (start > kLockEof - length) return Status::FromErrno(EOVERFLOW, "lock range overflows");
      s.end = start + length;
    }
  }
  return s;
}

const LockSpan* LockManager::FirstOverlap(const OwnerSpans& spans, const LockSpan& want) {
  // The span starting last at or before want.start may reach into it; else the first span
  // starting after it, if it starts before want.end.
  auto it = spans.upper_bound(want.start);
  if (it != spans.begin() && std::prev(it)->second.end > want.start) --it;
  if (it == spans.end() || !Overlap(it->second, want)) return nullptr;
  return &it->second;
}

const LockSpan* LockManager::FirstConflict(const OwnerLocks& locks, const LockSpan& want) {
  const LockSpan* w = FirstOverlap(locks.write, want);
  if (want.type != F_WRLCK) return w;  // read locks do not conflict with read locks
  const LockSpan* r = FirstOverlap(locks.read, want);
  if (w == nullptr || (r != nullptr && r->start < w->start)) return r;
  return w;
}

std::optional<LockSpan> LockManager::FindConflict(const sched::FileKey& key,
                                                  const LockSpan& want) const {
  auto file = files_.find(key);
  if (file == files_.end()) return std::nullopt;
  const LockSpan* first = nullptr;
  for (const auto& [owner, locks] : file->second) {
    if (owner == want.owner) continue;
    const LockSpan* c = FirstConflict(locks, want);
    if (c != nullptr && (first == nullptr || c->start < first->start ||
                         (c->start == first->start && c->owner < first->owner))) {
      first = c;
    }
  }
  if (first == nullptr) return std::nullopt;
  return *first;
}

std::vector<uint64_t> LockManager::ConflictingOwners(const sched::FileKey& key,
                                                     const LockSpan& want) const {
  std::vector<uint64_t> owners;
  auto file = files_.find(key);
  if (file == files_.end()) return owners;
  for (const auto& [owner, locks] : file->second) {
    if (owner != want.owner && FirstConflict(locks, want) != nullptr) owners.push_back(owner);
  }
  return owners;
}

void LockManager::Insert(OwnerSpans& spans, const LockSpan& span) {
  // Never a taken start: Cut cleared [start, end) and spans are never empty (MakeSpan).
  if (spans.emplace(span.start, span).second) {
    ++spans_;
    ++group_spans_[span.group];
  }
}

void LockManager::Erase(OwnerSpans& spans, OwnerSpans::iterator it) {
  auto group = group_spans_.find(it->second.group);
  if (--group->second == 0) group_spans_.erase(group);
  spans.erase(it);
  --spans_;
}

void LockManager::Cut(OwnerSpans& spans, const LockSpan& want) {
  auto it = spans.upper_bound(want.start);
  if (it != spans.begin() && std::prev(it)->second.end > want.start) --it;
  std::vector<LockSpan> rest;  // parts of covered spans outside [want.start, want.end)
  while (it != spans.end() && it->second.start < want.end) {
    const LockSpan s = it->second;
    auto next = std::next(it);
    Erase(spans, it);
    it = next;
    if (s.start < want.start) {
      LockSpan left = s;
      left.end = want.start;
      rest.push_back(left);
    }
    if (s.end > want.end) {
      LockSpan right = s;
      right.start = want.end;
      rest.push_back(right);
    }
  }
  for (const LockSpan& s : rest) Insert(spans, s);
}

bool LockManager::Apply(const sched::FileKey& key, const LockSpan& span, int16_t type) {
  LockSpan want = span;
  want.type = type;
  auto file = files_.find(key);
  if (type != F_UNLCK && file != files_.end()) {
    for (const auto& [owner, locks] : file->second) {
      if (owner != want.owner && FirstConflict(locks, want) != nullptr) return false;
    }
  }
  if (type == F_UNLCK) {
    if (file == files_.end()) return true;
    auto mine = file->second.find(want.owner);
    if (mine == file->second.end()) return true;
    Cut(mine->second.read, want);
    Cut(mine->second.write, want);
    Forget(key, want.owner);
    return true;
  }
  OwnerLocks& locks = files_[key][want.owner];
  owner_files_[want.owner].insert(key);
  Cut(locks.read, want);
  Cut(locks.write, want);
  // Merge with the owner's ranges of the same type that end where it starts or start where
  // it ends (after the cut, nothing of the owner's overlaps it).
  OwnerSpans& spans = locks.of(type);
  auto after = spans.lower_bound(want.end);
  if (after != spans.end() && after->second.start == want.end) {
    want.end = after->second.end;
    Erase(spans, after);
  }
  auto before = spans.lower_bound(want.start);
  if (before != spans.begin()) {
    --before;
    if (before->second.end == want.start) {
      want.start = before->second.start;
      Erase(spans, before);
    }
  }
  Insert(spans, want);
  return true;
}

void LockManager::Forget(const sched::FileKey& key, uint64_t owner) {
  auto file = files_.find(key);
  if (file == files_.end()) return;
  auto mine = file->second.find(owner);
  if (mine == file->second.end() || !mine->second.empty()) return;
  file->second.erase(mine);
  if (file->second.empty()) files_.erase(file);
  auto held = owner_files_.find(owner);
  if (held == owner_files_.end()) return;
  held->second.erase(key);
  if (held->second.empty()) owner_files_.erase(held);
}

void LockManager::ReleaseFile(const sched::FileKey& key, uint64_t owner) {
  LockSpan all;
  all.owner = owner;
  all.start = 0;
  all.end = kLockEof;
  Apply(key, all, F_UNLCK);
}

std::vector<sched::FileKey> LockManager::ReleaseOwner(uint64_t owner) {
  auto held = owner_files_.find(owner);
  if (held == owner_files_.end()) return {};
  std::vector<sched::FileKey> touched(held->second.begin(), held->second.end());
  for (const sched::FileKey& key : touched) ReleaseFile(key, owner);
  return touched;
}

std::vector<LockSpan> LockManager::Locks(const sched::FileKey& key) const {
  std::vector<LockSpan> all;
  auto file = files_.find(key);
  if (file == files_.end()) return all;
  for (const auto& [owner, locks] : file->second) {
    for (const auto& [start, s] : locks.read) all.push_back(s);
    for (const auto& [start, s] : locks.write) all.push_back(s);
  }
  std::sort(all.begin(), all.end(), [](const LockSpan& a, const LockSpan& b) {
    return a.start != b.start ? a.start < b.start : a.owner < b.owner;
  });
  return all;
}

}  // namespace iorelay::daemon
