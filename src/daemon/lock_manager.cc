// Range arithmetic of POSIX record locks: conflicts, splitting and merging.
#include "daemon/lock_manager.h"

#include <algorithm>

namespace iorelay::daemon {
namespace {

bool Overlap(const LockSpan& a, const LockSpan& b) { return a.start < b.end && b.start < a.end; }

bool Conflicts(const LockSpan& held, const LockSpan& want) {
  return held.owner != want.owner && Overlap(held, want) &&
         (held.type == F_WRLCK || want.type == F_WRLCK);
}

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

std::optional<LockSpan> LockManager::FindConflict(const sched::FileKey& key,
                                                  const LockSpan& want) const {
  auto it = files_.find(key);
  if (it == files_.end()) return std::nullopt;
  for (const LockSpan& held : it->second) {
    if (Conflicts(held, want)) return held;
  }
  return std::nullopt;
}

std::vector<uint64_t> LockManager::ConflictingOwners(const sched::FileKey& key,
                                                     const LockSpan& want) const {
  std::vector<uint64_t> owners;
  auto it = files_.find(key);
  if (it == files_.end()) return owners;
  for (const LockSpan& held : it->second) {
    if (Conflicts(held, want) &&
        std::find(owners.begin(), owners.end(), held.owner) == owners.end()) {
      owners.push_back(held.owner);
    }
  }
  return owners;
}

bool LockManager::Apply(const sched::FileKey& key, const LockSpan& span, int16_t type) {
  LockSpan want = span;
  want.type = type;
  std::vector<LockSpan>& spans = files_[key];
  if (type != F_UNLCK) {
    for (const LockSpan& held : spans) {
      if (Conflicts(held, want)) {
        if (spans.empty()) files_.erase(key);
        return false;
      }
    }
  }
  // Cut the owner's coverage of [start, end) out.
  std::vector<LockSpan> out;
  out.reserve(spans.size() + 2);
  for (const LockSpan& s : spans) {
    if (s.owner != want.owner || !Overlap(s, want)) {
      out.push_back(s);
      continue;
    }
    if (s.start < want.start) {
      LockSpan left = s;
      left.end = want.start;
      out.push_back(left);
    }
    if (s.end > want.end) {
      LockSpan right = s;
      right.start = want.end;
      out.push_back(right);
    }
  }
  if (type != F_UNLCK) {
    // Merge with the owner's adjacent ranges of the same type.
    std::vector<LockSpan> kept;
    kept.reserve(out.size() + 1);
    for (const LockSpan& s : out) {
      bool touches = s.owner == want.owner && s.type == want.type &&
                     (s.end == want.start || s.start == want.end);
      if (touches) {
        want.start = std::min(want.start, s.start);
        want.end = std::max(want.end, s.end);
      } else {
        kept.push_back(s);
      }
    }
    kept.push_back(want);
    out.swap(kept);
  }
  std::sort(out.begin(), out.end(), [](const LockSpan& a, const LockSpan& b) {
    return a.start != b.start ? a.start < b.start : a.owner < b.owner;
  });
  spans_ = spans_ - spans.size() + out.size();
  if (out.empty()) {
    files_.erase(key);
  } else {
    spans.swap(out);
  }
  return true;
}

void LockManager::ReleaseFile(const sched::FileKey& key, uint64_t owner) {
  LockSpan all;
  all.owner = owner;
  all.start = 0;
  all.end = kLockEof;
  Apply(key, all, F_UNLCK);
}

std::vector<sched::FileKey> LockManager::ReleaseOwner(uint64_t owner) {
  std::vector<sched::FileKey> touched;
  for (const auto& [key, spans] : files_) {
    for (const LockSpan& s : spans) {
      if (s.owner == owner) {
        touched.push_back(key);
        break;
      }
    }
  }
  for (const sched::FileKey& key : touched) ReleaseFile(key, owner);
  return touched;
}

std::vector<LockSpan> LockManager::Locks(const sched::FileKey& key) const {
  auto it = files_.find(key);
  return it == files_.end() ? std::vector<LockSpan>{} : it->second;
}

}  // namespace iorelay::daemon
