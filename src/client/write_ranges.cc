// Write-behind's ranges (write_ranges.h): adding a write, merging what it overlaps or touches.
#include "client/write_ranges.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace iorelay::client {
namespace {

// Puts the `n` bytes of iov at `pos` of `v`, which holds at least `pos` bytes: over what is
// there, and appended past its end (no zero fill first).
void PutAt(std::vector<uint8_t>& v, size_t pos, const struct iovec* iov, int count, size_t n) {
  for (int i = 0; i < count && n > 0; ++i) {
    const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
    size_t len = std::min(n, iov[i].iov_len);
    n -= len;
    const size_t over = pos < v.size() ? std::min(len, v.size() - pos) : 0;
    if (over > 0) std::memcpy(v.data() + pos, p, over);
    if (len > over) v.insert(v.end(), p + over, p + len);
    pos += len;
  }
}

}  // namespace

void WriteRanges::Add(int64_t at, const struct iovec* iov, int count, size_t n) {
  if (n == 0) return;
  const int64_t end = at + static_cast<int64_t>(n);
  // The first range that ends at or after `at` (touching counts), and the ranges from it that
  // start at or before `end`.
  auto first = ranges_.upper_bound(at);
  if (first != ranges_.begin()) {
    auto prev = std::prev(first);
    if (prev->first + static_cast<int64_t>(prev->second.size()) >= at) first = prev;
  }
  auto last = first;
  while (last != ranges_.end() && last->first <= end) ++last;
  if (first == last) {  // touches nothing: a range of its own
    std::vector<uint8_t> v;
    if (spare_.capacity() >= n) {
      v.swap(spare_);
      v.clear();
    }
    PutAt(v, 0, iov, count, n);
    bytes_ += n;
    ranges_.emplace(at, std::move(v));
    return;
  }
  if (std::next(first) == last && first->first <= at) {  // within or extending one range
    std::vector<uint8_t>& v = first->second;
    bytes_ -= v.size();
    PutAt(v, static_cast<size_t>(at - first->first), iov, count, n);
    bytes_ += v.size();
    return;
  }
  // Several ranges, or one that starts after `at`: one range from the lowest start to the
  // highest end, the old bytes first and the new over them.
  const int64_t lo = std::min(at, first->first);
  std::vector<uint8_t> v;
  for (auto it = first; it != last; ++it) {
    const auto pos = static_cast<size_t>(it->first - lo);
    if (v.size() < pos) v.resize(pos);  // (a gap the new bytes fill)
    v.insert(v.end(), it->second.begin(), it->second.end());
    bytes_ -= it->second.size();
  }
  if (v.size() < static_cast<size_t>(at - lo)) v.resize(static_cast<size_t>(at - lo));
  PutAt(v, static_cast<size_t>(at - lo), iov, count, n);
  bytes_ += v.size();
  ranges_.erase(first, last);
  ranges_.emplace(lo, std::move(v));
}

std::vector<WriteRanges::Range> WriteRanges::Take() {
  std::vector<Range> out;
  out.reserve(ranges_.size());
  for (auto& [at, data] : ranges_) out.push_back(Range{at, std::move(data)});
  ranges_.clear();
  bytes_ = 0;
  return out;
}

void WriteRanges::Recycle(std::vector<uint8_t>&& buffer) {
  if (buffer.capacity() > spare_.capacity()) spare_ = std::move(buffer);
}

int64_t WriteRanges::last_end() const {
  if (ranges_.empty()) return 0;
  const auto& [at, data] = *ranges_.rbegin();
  return at + static_cast<int64_t>(data.size());
}

}  // namespace iorelay::client
