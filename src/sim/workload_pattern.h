// The iorelay-bench access patterns (docs/exploration.md, ALGORITHMS.md section 1) as pure
// functions, without MPI: which file and offset each request of each rank touches.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace iorelay::sim {

enum class Layout { kFilePerProcess, kShared };
enum class Spatiality { kContiguous, kStrided };

struct PatternSpec {
  Layout layout = Layout::kShared;
  Spatiality spatiality = Spatiality::kContiguous;
  bool write = true;  // false: read
  bool odirect = false;
  uint64_t request_bytes = 64 * 1024;  // t
  uint64_t block_bytes = 0;            // b (0: derived)
  uint64_t segments = 0;               // s (0: derived)
  uint64_t total_bytes = 0;            // all ranks together (0: from block and segments)
  // Every rank stops issuing requests once this much simulated time has passed (0: none), as
  // the bench's --stonewall; bandwidth is then the bytes moved over the slowest rank's time.
  double stonewall_s = 0;
  // The bench's --wearout (needs a stonewall): after it, every rank issues requests until it has
  // done as many as the rank that did most by the stonewall (sim/wear_out.h).
  bool wearout = false;
  // Every rank issues at most its first this many requests (0: all of them); the file layout
  // stays that of the whole pattern, as a stonewall leaves it. A time budget for patterns whose
  // real runs move far more requests than are worth simulating one by one.
  uint64_t max_requests = 0;
  uint32_t ranks = 1;
  uint32_t nodes = 1;  // ranks are spread in blocks of ranks/nodes (the last may hold fewer)
};

// A checked pattern with every size derived, as iorelay-bench derives them: strided means
// b = t with s segments; contiguous means one segment of b; --total sets s or b per rank.
struct Pattern {
  PatternSpec spec;
  uint64_t block_bytes = 0;
  uint64_t segments = 0;
  uint32_t ranks_per_node = 1;

  uint64_t RequestsPerRank() const { return block_bytes / spec.request_bytes * segments; }
  uint64_t TotalBytes() const { return RequestsPerRank() * spec.request_bytes * spec.ranks; }
  // Requests a rank issues at most: RequestsPerRank(), capped at spec.max_requests.
  uint64_t IssuedPerRank() const {
    const uint64_t n = RequestsPerRank();
    return spec.max_requests > 0 && spec.max_requests < n ? spec.max_requests : n;
  }
  // Offset of request i (issue order) of `rank`: segment k = i / (b/t), j = i % (b/t);
  // shared: (k * ranks + rank) * b + j * t; file per process: k * b + j * t.
  uint64_t Offset(uint32_t rank, uint64_t i) const;
  // File id: 0 for the shared file, rank + 1 for file per process.
  uint64_t File(uint32_t rank) const;
  uint32_t NodeOf(uint32_t rank) const { return rank / ranks_per_node; }
  // Whether a rank may issue another request at simulated time `now_s`.
  bool BeforeStonewall(double now_s) const {
    return spec.stonewall_s <= 0 || now_s < spec.stonewall_s;
  }
};

// Requests per rank when neither --segments nor --total nor --block is given (as the bench).
inline constexpr uint64_t kDefaultRequestsPerRank = 16;

// InvalidArgument naming the offending option for impossible combinations.
Result<Pattern> MakePattern(const PatternSpec& spec);

Result<Layout> ParseLayout(const std::string& text);          // fpp | shared
Result<Spatiality> ParseSpatiality(const std::string& text);  // contiguous | strided
const char* LayoutName(Layout layout);
const char* SpatialityName(Spatiality spatiality);

}  // namespace iorelay::sim
