// ROMIO's two-phase collective write as a plan the simulator executes: the accessed range is cut
// into the aggregators' file domains (even, or by the Lustre stripe rule), each domain into cycles
// of cb_buffer_size bytes, and each cycle says which bytes every rank hands every aggregator (the
// exchange) and which file ranges every aggregator then writes. Pure code: no MPI, no OS calls.
#pragma once

#include <cstdint>
#include <vector>

#include "collective/file_domains.h"
#include "collective/split_merge.h"
#include "common/status.h"

namespace iorelay::collective {

struct TwoPhaseSpec {
  int32_t aggregators = 1;
  // > 0: the Lustre rule, stripe o / stripe_size_bytes goes to aggregator (o / S) mod A;
  // 0: ROMIO's even domains of the accessed range.
  uint64_t stripe_size_bytes = 0;
  uint64_t cb_buffer_bytes = 16 << 20;  // ROMIO's default cb_buffer_size
};

// `bytes` of `rank`'s data that go to aggregator `aggregator` (an index into the aggregator list,
// as in AggregatorChoice::ranks) in one cycle.
struct Flow {
  int32_t rank = 0;
  int32_t aggregator = 0;
  uint64_t bytes = 0;
};

// The file ranges an aggregator writes in one cycle: the accessed bytes of its cycle's window, in
// file order, adjacent ranges joined. Holes between the ranks' extents are not written (a dense
// access has none; ROMIO would read and rewrite them).
struct AggregatorWrite {
  int32_t aggregator = 0;
  std::vector<FileDomain> ranges;
  uint64_t Bytes() const;
};

// Cycle c: every aggregator's c-th window of cb_buffer_size bytes of its domain (counted in
// domain bytes, holes included, as ROMIO counts them). Aggregators whose domain has fewer windows,
// or whose window holds no accessed byte, are absent.
struct Cycle {
  std::vector<Flow> flows;  // by aggregator, then rank
  std::vector<AggregatorWrite> writes;
};

// The plan of one collective write of `extents` (any number per rank, none overlapping another).
// InvalidArgument naming the field for aggregators < 1, cb_buffer_bytes 0 or overlapping extents.
// No extent with bytes: no cycles.
Result<std::vector<Cycle>> PlanTwoPhase(const std::vector<RankExtent>& extents,
                                        const TwoPhaseSpec& spec);

// The file ranges of aggregator `a`'s domain within [begin, end), in file order.
std::vector<FileDomain> AggregatorDomain(uint64_t begin, uint64_t end, int32_t a,
                                         const TwoPhaseSpec& spec);

}  // namespace iorelay::collective
