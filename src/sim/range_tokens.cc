#include "sim/range_tokens.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <set>

namespace iorelay::sim {

namespace {
constexpr uint64_t kEndOfFile = std::numeric_limits<uint64_t>::max();
}  // namespace

bool FileRangeTokens::Covers(Holder holder, uint64_t begin, uint64_t end) const {
  auto it = held_.upper_bound(begin);
  if (it == held_.begin()) return false;
  --it;  // the range that starts at or before `begin`
  // Assign merges a holder's adjacent ranges, so one range must cover all of it.
  return it->second.holder == holder && it->second.end >= end;
}

int FileRangeTokens::Assign(Holder holder, uint64_t begin, uint64_t end) {
  std::set<Holder> losers;
  auto it = held_.upper_bound(begin);
  if (it != held_.begin()) {
    auto before = std::prev(it);
    if (before->second.end > begin) {  // straddles `begin`: keep its part below
      const Range tail = before->second;
      before->second.end = begin;
      held_.emplace(begin, tail);
      it = held_.find(begin);
    }
  }
  while (it != held_.end() && it->first < end) {
    const Range r = it->second;
    if (r.holder != holder) losers.insert(r.holder);
    it = held_.erase(it);
    if (r.end > end) {  // straddles `end`: keep its part above
      it = held_.emplace(end, r).first;
      break;
    }
  }
  uint64_t first = begin;
  uint64_t last = end;
  // Merge with the holder's ranges that touch the new one.
  auto next = held_.find(end);
  if (next != held_.end() && next->second.holder == holder) {
    last = next->second.end;
    held_.erase(next);
  }
  auto after = held_.lower_bound(begin);
  if (after != held_.begin()) {
    auto prev = std::prev(after);
    if (prev->second.holder == holder && prev->second.end == begin) {
      first = prev->first;
      held_.erase(prev);
    }
  }
  held_[first] = Range{last, holder};
  return static_cast<int>(losers.size());
}

FileRangeTokens::Outcome FileRangeTokens::Acquire(Holder holder, uint64_t offset, uint64_t length) {
  const uint64_t end = offset + length;
  // The first write of another holder in progress at or above `offset`; one that overlaps the
  // required bytes blocks, one above them bounds the grant.
  uint64_t grant_end = kEndOfFile;
  for (const auto& [start, w] : in_progress_) {
    if (w.holder == holder) continue;
    if (start < end && w.end > offset) return Outcome::kBlocked;
    if (start >= end && start < grant_end) grant_end = start;
  }
  in_progress_.emplace(offset, Range{end, holder});
  if (Covers(holder, offset, end)) return Outcome::kHeld;
  // Below the write, the grant takes only bytes nobody holds: the first writer gets the whole
  // file, a later one starts where the ranges of others below it end.
  uint64_t grant_begin = 0;
  for (auto it = held_.upper_bound(offset); it != held_.begin();) {
    --it;
    if (it->second.holder != holder) {
      grant_begin = std::min(it->second.end, offset);
      break;
    }
  }
  revoked_ = Assign(holder, grant_begin, grant_end);
  return Outcome::kGranted;
}

void FileRangeTokens::Release(Holder holder, uint64_t offset, uint64_t length) {
  auto [lo, hi] = in_progress_.equal_range(offset);
  for (auto it = lo; it != hi; ++it) {
    if (it->second.holder == holder && it->second.end == offset + length) {
      in_progress_.erase(it);
      return;
    }
  }
}

}  // namespace iorelay::sim
