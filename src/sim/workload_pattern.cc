// Sizes derived as iorelay-bench derives them (tools/bench/options.cc), so a simulated pattern and
// a measured one with the same options move the same bytes at the same offsets.
#include "sim/workload_pattern.h"

namespace iorelay::sim {

uint64_t Pattern::Offset(uint32_t rank, uint64_t i) const {
  const uint64_t per_block = block_bytes / spec.request_bytes;
  const uint64_t segment = i / per_block;
  const uint64_t within = (i % per_block) * spec.request_bytes;
  if (spec.layout == Layout::kFilePerProcess) return segment * block_bytes + within;
  return (segment * spec.ranks + rank) * block_bytes + within;
}

uint64_t Pattern::File(uint32_t rank) const {
  return spec.layout == Layout::kFilePerProcess ? uint64_t{rank} + 1 : 0;
}

Result<Pattern> MakePattern(const PatternSpec& spec) {
  const uint64_t t = spec.request_bytes;
  if (t == 0 || t % 8 != 0) {
    return Status::InvalidArgument("--request must be a positive multiple of 8 bytes");
  }
  if (spec.odirect && t % 4096 != 0) {
    return Status::InvalidArgument("--odirect needs --request to be a multiple of 4096");
  }
  if (spec.layout == Layout::kFilePerProcess && spec.spatiality == Spatiality::kStrided) {
    return Status::InvalidArgument("file-per-process is only contiguous");
  }
  if (spec.ranks == 0) return Status::InvalidArgument("--ranks must be >= 1");
  if (spec.stonewall_s < 0) return Status::InvalidArgument("--stonewall must be >= 0");
  if (spec.wearout && spec.stonewall_s <= 0) {
    return Status::InvalidArgument("--wearout needs --stonewall");
  }
  if (spec.nodes == 0 || spec.nodes > spec.ranks) {
    return Status::InvalidArgument("--nodes must be between 1 and --ranks");
  }
  if (spec.total_bytes != 0 && (spec.block_bytes != 0 || spec.segments != 0)) {
    return Status::InvalidArgument("--total excludes --block and --segments");
  }
  Pattern p;
  p.spec = spec;
  p.ranks_per_node = (spec.ranks + spec.nodes - 1) / spec.nodes;
  const uint64_t per_rank = spec.total_bytes / spec.ranks;
  if (spec.spatiality == Spatiality::kStrided) {
    if (spec.block_bytes != 0 && spec.block_bytes != t) {
      return Status::InvalidArgument("1D-strided means --block equal to --request");
    }
    p.block_bytes = t;
    p.segments = spec.total_bytes != 0 ? per_rank / t
                 : spec.segments != 0  ? spec.segments
                                       : kDefaultRequestsPerRank;
  } else {
    if (spec.segments > 1) {
      return Status::InvalidArgument("contiguous means one segment (use --block or --total)");
    }
    p.segments = 1;
    p.block_bytes = spec.total_bytes != 0   ? per_rank / t * t
                    : spec.block_bytes != 0 ? spec.block_bytes
                                            : kDefaultRequestsPerRank * t;
  }
  if (p.segments == 0 || p.block_bytes == 0) {
    return Status::InvalidArgument("--total is smaller than one request per rank");
  }
  if (p.block_bytes % t != 0)
    return Status::InvalidArgument("--block must be a multiple of --request");
  return p;
}

Result<Layout> ParseLayout(const std::string& text) {
  if (text == "fpp") return Layout::kFilePerProcess;
  if (text == "shared") return Layout::kShared;
  return Status::InvalidArgument("--layout '" + text + "' unknown (valid: fpp, shared)");
}

Result<Spatiality> ParseSpatiality(const std::string& text) {
  if (text == "contiguous") return Spatiality::kContiguous;
  if (text == "strided") return Spatiality::kStrided;
  return Status::InvalidArgument("--spatiality '" + text +
                                 "' unknown (valid: contiguous, strided)");
}

const char* LayoutName(Layout layout) {
  return layout == Layout::kFilePerProcess ? "fpp" : "shared";
}

const char* SpatialityName(Spatiality spatiality) {
  return spatiality == Spatiality::kStrided ? "strided" : "contiguous";
}

}  // namespace iorelay::sim
