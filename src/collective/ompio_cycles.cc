// OMPIO's static and dynamic segmentation as cycle plans (see ompio_cycles.h).
#include "collective/ompio_cycles.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace iorelay::collective {
namespace {

// What one (cycle, aggregator) gathers: bytes by rank, and the file ranges.
struct Gathered {
  std::map<int32_t, uint64_t> by_rank;
  std::vector<FileDomain> ranges;
};

using Plan = std::map<std::pair<size_t, int32_t>, Gathered>;

// Cuts a stream of extents (in the order given) into chunks of `chunk` bytes; chunk c is what
// aggregator `a` gathers in cycle c.
void Chunk(const std::vector<RankExtent>& stream, uint64_t chunk, int32_t a, Plan& plan) {
  uint64_t position = 0;  // bytes of the stream before the current extent
  for (const RankExtent& e : stream) {
    uint64_t done = 0;
    while (done < e.bytes) {
      const size_t cycle = (position + done) / chunk;
      const uint64_t take = std::min(e.bytes - done, (cycle + 1) * chunk - (position + done));
      Gathered& g = plan[{cycle, a}];
      g.by_rank[e.rank] += take;
      g.ranges.push_back({e.offset + done, e.offset + done + take});
      done += take;
    }
    position += e.bytes;
  }
}

bool ByOffset(const RankExtent& x, const RankExtent& y) { return x.offset < y.offset; }

}  // namespace

uint64_t StaticShare(uint64_t cycle_buffer_bytes, uint64_t ranks) {
  return std::max<uint64_t>(1, cycle_buffer_bytes / std::max<uint64_t>(1, ranks));
}

Result<std::vector<Cycle>> PlanOmpio(const std::vector<RankExtent>& extents,
                                     const std::vector<RankGroup>& groups, const OmpioSpec& spec) {
  if (spec.cycle_buffer_bytes == 0) {
    return Status::InvalidArgument(
        "cycle_buffer_bytes (half of io_ompio_bytes_per_agg) must be > 0");
  }
  std::map<int32_t, int32_t> group_of;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].ranks.empty()) {
      return Status::InvalidArgument("group " + std::to_string(g) + " has no rank");
    }
    for (int32_t r : groups[g].ranks) {
      if (!group_of.emplace(r, static_cast<int32_t>(g)).second) {
        return Status::InvalidArgument("rank " + std::to_string(r) + " is in two groups");
      }
    }
  }
  std::vector<RankExtent> sorted;
  for (const RankExtent& e : extents) {
    if (e.bytes == 0) continue;
    if (!group_of.contains(e.rank)) {
      return Status::InvalidArgument("rank " + std::to_string(e.rank) +
                                     " has data but is in no group");
    }
    sorted.push_back(e);
  }
  std::stable_sort(sorted.begin(), sorted.end(), ByOffset);
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].offset < sorted[i - 1].offset + sorted[i - 1].bytes) {
      return Status::InvalidArgument(
          "extents overlap: ranks " + std::to_string(sorted[i - 1].rank) + " and " +
          std::to_string(sorted[i].rank) + " at byte " + std::to_string(sorted[i].offset));
    }
  }
  Plan plan;
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto a = static_cast<int32_t>(g);
    if (spec.segmentation == Segmentation::kDynamic) {
      std::vector<RankExtent> stream;  // the group's data in file order
      for (const RankExtent& e : sorted) {
        if (group_of.at(e.rank) == a) stream.push_back(e);
      }
      Chunk(stream, spec.cycle_buffer_bytes, a, plan);
      continue;
    }
    const uint64_t share = StaticShare(spec.cycle_buffer_bytes, groups[g].ranks.size());
    for (int32_t r : groups[g].ranks) {
      std::vector<RankExtent> stream;  // the rank's own data in file order
      for (const RankExtent& e : sorted) {
        if (e.rank == r) stream.push_back(e);
      }
      Chunk(stream, share, a, plan);
    }
  }
  std::vector<Cycle> cycles;
  for (auto& [key, gathered] : plan) {  // by cycle, then aggregator
    const auto [c, a] = key;
    if (cycles.size() <= c) cycles.resize(c + 1);
    for (const auto& [rank, bytes] : gathered.by_rank) cycles[c].flows.push_back({rank, a, bytes});
    std::sort(gathered.ranges.begin(), gathered.ranges.end(),
              [](const FileDomain& x, const FileDomain& y) { return x.begin < y.begin; });
    AggregatorWrite write{a, {}};
    for (const FileDomain& r : gathered.ranges) {
      if (!write.ranges.empty() && write.ranges.back().end == r.begin) {
        write.ranges.back().end = r.end;
      } else {
        write.ranges.push_back(r);
      }
    }
    cycles[c].writes.push_back(std::move(write));
  }
  return cycles;
}

}  // namespace iorelay::collective
