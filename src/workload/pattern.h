// The access patterns of iorelay-bench and iorelay-sim (docs/exploration.md), defined once so that
// a simulated pattern and a measured one with the same options move the same bytes at the same
// offsets: the options that make a pattern, their checks, the sizes derived from them, and which
// offset each request of each rank touches. No MPI: the bench adds I/O, the simulator a model.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace iorelay::workload {

enum class Layout { kFilePerProcess, kShared };
enum class Spatiality { kContiguous, kStrided };

// A pattern as the command line gives it (--layout, --spatiality, --request, ...); sizes left 0
// are derived.
struct PatternSpec {
  Layout layout = Layout::kShared;
  Spatiality spatiality = Spatiality::kContiguous;
  uint64_t request_bytes = 64 * 1024;  // t: one request
  uint64_t block_bytes = 0;            // b: contiguous piece of a rank per segment (0: derived)
  uint64_t segments = 0;               // s (0: derived)
  uint64_t total_bytes = 0;            // all ranks together, instead of b and s (0: none)
  // Every rank stops issuing requests after this many seconds (0: none); bandwidth is then the
  // bytes moved over the slowest rank's time.
  double stonewall_s = 0;
  // Needs a stonewall: after it, every rank issues requests until it has done as many as the
  // rank that did most by the stonewall.
  bool wearout = false;
  bool odirect = false;  // O_DIRECT: requests in multiples of kDirectAlignBytes
};

// Requests per rank when neither --segments nor --total nor --block is given.
inline constexpr uint64_t kDefaultRequestsPerRank = 16;
// What O_DIRECT asks of the request size.
inline constexpr uint64_t kDirectAlignBytes = 4096;

// A checked pattern's sizes, every 0 of its spec derived.
struct Shape {
  Layout layout = Layout::kShared;
  uint64_t request_bytes = 0;  // t
  uint64_t block_bytes = 0;    // b
  uint64_t segments = 0;       // s

  // Requests one rank issues when nothing stops it early: b/t per segment, s segments.
  uint64_t RequestsPerRank() const { return block_bytes / request_bytes * segments; }
  // File offset of request i (0-based, in issue order) of `rank` among `ranks`:
  //   segment k = i / (b/t), j = i % (b/t);
  //   shared: (k * ranks + rank) * b + j * t;   file per process: k * b + j * t.
  uint64_t Offset(uint32_t rank, uint32_t ranks, uint64_t i) const;
};

// Checks `spec` for `ranks` processes and derives its sizes: strided means b = t with s segments
// (default 16), contiguous is one segment of b (default 16 requests); --total sets s or b per
// rank instead. InvalidArgument naming the offending option for an impossible combination.
Result<Shape> Derive(const PatternSpec& spec, uint32_t ranks);

// The names the command lines take (fpp | shared, contiguous | strided), in the form
// cli::Choice (common/option_table.h) takes them; the one parser of both.
const std::vector<std::pair<std::string, Layout>>& LayoutChoices();
const std::vector<std::pair<std::string, Spatiality>>& SpatialityChoices();
const char* LayoutName(Layout layout);
const char* SpatialityName(Spatiality spatiality);

}  // namespace iorelay::workload
