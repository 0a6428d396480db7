// The checks and size derivation of every access pattern, for the bench and the simulator alike
// (see pattern.h).
#include "workload/pattern.h"

namespace iorelay::workload {
namespace {

// The choice whose value is `value`, by name.
template <typename T>
const char* NameOf(const std::vector<std::pair<std::string, T>>& choices, T value) {
  for (const auto& [name, v] : choices) {
    if (v == value) return name.c_str();
  }
  return "?";
}

// The checks that do not depend on the sizes being derived.
Status CheckSpec(const PatternSpec& spec, uint32_t ranks) {
  const uint64_t t = spec.request_bytes;
  if (t == 0 || t % 8 != 0) {
    return Status::InvalidArgument("--request must be a positive multiple of 8 bytes");
  }
  if (spec.odirect && t % kDirectAlignBytes != 0) {
    return Status::InvalidArgument("--odirect needs --request to be a multiple of 4096");
  }
  if (spec.layout == Layout::kFilePerProcess && spec.spatiality == Spatiality::kStrided) {
    return Status::InvalidArgument("file-per-process is only contiguous");
  }
  if (ranks == 0) return Status::InvalidArgument("--ranks must be >= 1");
  if (spec.stonewall_s < 0) return Status::InvalidArgument("--stonewall must be >= 0");
  if (spec.wearout && spec.stonewall_s <= 0) {
    return Status::InvalidArgument("--wearout needs --stonewall");
  }
  if (spec.total_bytes != 0 && (spec.block_bytes != 0 || spec.segments != 0)) {
    return Status::InvalidArgument("--total excludes --block and --segments");
  }
  return Status::Ok();
}

}  // namespace

uint64_t Shape::Offset(uint32_t rank, uint32_t ranks, uint64_t i) const {
  const uint64_t per_block = block_bytes / request_bytes;
  const uint64_t segment = i / per_block;
  const uint64_t within = (i % per_block) * request_bytes;
  if (layout == Layout::kFilePerProcess) return segment * block_bytes + within;
  return (segment * ranks + rank) * block_bytes + within;
}

Result<Shape> Derive(const PatternSpec& spec, uint32_t ranks) {
  IORELAY_RETURN_IF_ERROR(CheckSpec(spec, ranks));
  const uint64_t t = spec.request_bytes;
  const uint64_t per_rank = spec.total_bytes / ranks;
  Shape s;
  s.layout = spec.layout;
  s.request_bytes = t;
  if (spec.spatiality == Spatiality::kStrided) {
    if (spec.block_bytes != 0 && spec.block_bytes != t) {
      return Status::InvalidArgument("1D-strided means --block equal to --request");
    }
    s.block_bytes = t;
    s.segments = spec.total_bytes != 0 ? per_rank / t
                 : spec.segments != 0  ? spec.segments
                                       : kDefaultRequestsPerRank;
  } else {
    if (spec.segments > 1) {
      return Status::InvalidArgument("contiguous means one segment (use --block or --total)");
    }
    s.segments = 1;
    s.block_bytes = spec.total_bytes != 0   ? per_rank / t * t
                    : spec.block_bytes != 0 ? spec.block_bytes
                                            : kDefaultRequestsPerRank * t;
  }
  if (s.segments == 0 || s.block_bytes == 0) {
    return Status::InvalidArgument("--total is smaller than one request per rank");
  }
  if (s.block_bytes % t != 0) {
    return Status::InvalidArgument("--block must be a multiple of --request");
  }
  return s;
}

const std::vector<std::pair<std::string, Layout>>& LayoutChoices() {
  static const auto* choices = new std::vector<std::pair<std::string, Layout>>{
      {"fpp", Layout::kFilePerProcess}, {"shared", Layout::kShared}};
  return *choices;
}

const std::vector<std::pair<std::string, Spatiality>>& SpatialityChoices() {
  static const auto* choices = new std::vector<std::pair<std::string, Spatiality>>{
      {"contiguous", Spatiality::kContiguous}, {"strided", Spatiality::kStrided}};
  return *choices;
}

const char* LayoutName(Layout layout) { return NameOf(LayoutChoices(), layout); }

const char* SpatialityName(Spatiality spatiality) {
  return NameOf(SpatialityChoices(), spatiality);
}

}  // namespace iorelay::workload
