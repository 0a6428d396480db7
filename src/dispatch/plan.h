// The dispatch core: how one scheduler dispatch becomes backend calls, and how a call's result
// becomes each request's result. Pure (no threads, sockets, clock or backend): the daemon runs
// it around its Backend (src/daemon/data_ops.cc, ExecuteDispatch), and a simulator can run it
// around a model of the storage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"

namespace iorelay::dispatch {

// Linux IOV_MAX: at most this many requests in one preadv/pwritev.
inline constexpr size_t kMaxIov = 1024;

// What the core needs to know of one request of a dispatch.
struct RequestDesc {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool positional = true;     // pread/pwrite; false: read/write at the file offset (always alone)
  bool append = false;        // O_APPEND: the offset is decided at the call (always alone)
  uint32_t merge_class = 0;   // open flags that must be equal to share a call (O_DIRECT, O_SYNC)
  uint32_t direct_align = 0;  // O_DIRECT: offset, length and buffer must be multiples; 0: none
  uintptr_t buffer = 0;       // the request's buffer address (O_DIRECT alignment)
};

// One step of a plan, in order: a backend call over some requests (one: a plain call; several:
// one vectored call over their buffers, in order), or a request refused before any call.
struct Step {
  enum class Kind { kCall, kRefuse };
  Kind kind = Kind::kCall;
  size_t begin = 0;  // into Plan::requests
  size_t end = 0;
  int error = 0;  // kRefuse: the errno (EINVAL for misaligned O_DIRECT, as a local call gives)
};

struct Plan {
  std::vector<Step> steps;
  std::vector<size_t> requests;  // indices into the dispatch's requests, step after step
  std::vector<size_t> pending;   // BuildPlan's scratch (kept for its capacity)
  std::span<const size_t> Of(const Step& s) const {
    return std::span<const size_t>(requests).subspan(s.begin, s.end - s.begin);
  }
};

// A misaligned O_DIRECT request fails alone with EINVAL, as it would locally, even when its
// neighbours are aligned.
bool MisalignedDirect(const RequestDesc& r);
// Whether `b` may follow `a` in one call: both positional, same merge class, no O_APPEND, `b`
// starting exactly where `a` ends. (A dispatch holds one file and one op, by the scheduler.)
bool Continues(const RequestDesc& a, const RequestDesc& b);

// The steps for a dispatch's requests (in the scheduler's order): runs of requests that continue
// each other become one call of at most kMaxIov requests; misaligned O_DIRECT requests are
// refused where they stand; with `overlapping` (to-agg's merged overlapping reads) every request
// is its own call. `*out` is overwritten (its capacity reused).
void BuildPlan(std::span<const RequestDesc> requests, bool overlapping, Plan* out);

// What one request of a call gets.
struct Share {
  uint64_t bytes = 0;
  int error = 0;             // the call's errno, for every request of a failed call
  bool retry_alone = false;  // after a short count: this request gets its own call
};

// Splits a call's result over its requests (lengths in call order), as the local calls would
// have ended: a full count gives each its length; a short count n gives the requests inside
// [0, n) their length, the one straddling n its partial count, and the ones after it are
// retried alone (so each gets what its own call gives: 0 at end of file, ENOSPC, ...); an error
// gives each the errno. `*out` is overwritten.
void SplitResult(const Result<size_t>& result, std::span<const uint64_t> lengths,
                 std::vector<Share>* out);

}  // namespace iorelay::dispatch
