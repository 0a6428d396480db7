// The two-phase plan (see two_phase.h): domains, their cb_buffer_size windows, and each window
// intersected with the ranks' extents.
#include "collective/two_phase.h"

#include <algorithm>
#include <map>
#include <string>

namespace iorelay::collective {

uint64_t AggregatorWrite::Bytes() const {
  uint64_t n = 0;
  for (const FileDomain& r : ranges) n += r.end - r.begin;
  return n;
}

std::vector<FileDomain> AggregatorDomain(uint64_t begin, uint64_t end, int32_t a,
                                         const TwoPhaseSpec& spec) {
  std::vector<FileDomain> out;
  if (end <= begin) return out;
  if (spec.stripe_size_bytes == 0) {
    const auto even = EvenDomains(begin, end, spec.aggregators);
    if (even.ok() && (*even)[a].end > (*even)[a].begin) out.push_back((*even)[a]);
    return out;
  }
  const uint64_t s = spec.stripe_size_bytes;
  const auto count = static_cast<uint64_t>(spec.aggregators);
  // The first stripe at or after begin's stripe that belongs to a, then every count-th.
  uint64_t stripe = begin / s;
  stripe += (static_cast<uint64_t>(a) + count - stripe % count) % count;
  for (; stripe * s < end; stripe += count) {
    out.push_back({std::max(begin, stripe * s), std::min(end, (stripe + 1) * s)});
  }
  return out;
}

namespace {

// Cuts `domain` into windows of `bytes` domain bytes each.
std::vector<std::vector<FileDomain>> Windows(const std::vector<FileDomain>& domain,
                                             uint64_t bytes) {
  std::vector<std::vector<FileDomain>> out;
  uint64_t room = 0;
  for (FileDomain d : domain) {
    while (d.begin < d.end) {
      if (room == 0) {
        out.emplace_back();
        room = bytes;
      }
      const uint64_t take = std::min(room, d.end - d.begin);
      out.back().push_back({d.begin, d.begin + take});
      d.begin += take;
      room -= take;
    }
  }
  return out;
}

}  // namespace

Result<std::vector<Cycle>> PlanTwoPhase(const std::vector<RankExtent>& extents,
                                        const TwoPhaseSpec& spec) {
  if (spec.aggregators < 1) return Status::InvalidArgument("aggregators must be >= 1");
  if (spec.cb_buffer_bytes == 0) return Status::InvalidArgument("cb_buffer_bytes must be > 0");
  std::vector<RankExtent> sorted;
  for (const RankExtent& e : extents) {
    if (e.bytes > 0) sorted.push_back(e);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const RankExtent& x, const RankExtent& y) { return x.offset < y.offset; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].offset < sorted[i - 1].offset + sorted[i - 1].bytes) {
      return Status::InvalidArgument(
          "extents overlap: ranks " + std::to_string(sorted[i - 1].rank) + " and " +
          std::to_string(sorted[i].rank) + " at byte " + std::to_string(sorted[i].offset));
    }
  }
  std::vector<Cycle> cycles;
  if (sorted.empty()) return cycles;
  const uint64_t begin = sorted.front().offset;
  const uint64_t end = sorted.back().offset + sorted.back().bytes;
  for (int32_t a = 0; a < spec.aggregators; ++a) {
    const auto windows = Windows(AggregatorDomain(begin, end, a, spec), spec.cb_buffer_bytes);
    if (cycles.size() < windows.size()) cycles.resize(windows.size());
    for (size_t c = 0; c < windows.size(); ++c) {
      std::map<int32_t, uint64_t> by_rank;
      AggregatorWrite write{a, {}};
      for (const FileDomain& w : windows[c]) {
        // The first extent that ends after the window begins.
        auto it = std::partition_point(sorted.begin(), sorted.end(), [&](const RankExtent& e) {
          return e.offset + e.bytes <= w.begin;
        });
        for (; it != sorted.end() && it->offset < w.end; ++it) {
          const uint64_t b = std::max(w.begin, it->offset);
          const uint64_t e = std::min(w.end, it->offset + it->bytes);
          by_rank[it->rank] += e - b;
          if (!write.ranges.empty() && write.ranges.back().end == b) {
            write.ranges.back().end = e;
          } else {
            write.ranges.push_back({b, e});
          }
        }
      }
      for (const auto& [rank, bytes] : by_rank) cycles[c].flows.push_back({rank, a, bytes});
      if (!write.ranges.empty()) cycles[c].writes.push_back(std::move(write));
    }
  }
  return cycles;
}

}  // namespace iorelay::collective
