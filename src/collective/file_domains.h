// The file domains of collective I/O's aggregators: which aggregator writes which bytes. ROMIO's
// default cuts the accessed range into even contiguous domains; ROMIO on Lustre cuts at stripe
// boundaries and gives the stripe of offset o to aggregator (o / stripe_size) mod A, so each
// aggregator always meets the same storage targets. Pure code.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"

namespace iorelay::collective {

// Bytes [begin, end) of the file.
struct FileDomain {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// ROMIO's even domains of [begin, end) for `aggregators` (>= 1): each ceil(len / A) bytes, the
// last ones shorter or empty. InvalidArgument when aggregators < 1 or end < begin.
Result<std::vector<FileDomain>> EvenDomains(uint64_t begin, uint64_t end, int32_t aggregators);

// The index (into the aggregator list) of the aggregator of byte `offset` under the stripe rule:
// (offset / stripe_size) mod aggregators. Both must be > 0 (checked by the caller).
int32_t StripeAggregator(uint64_t offset, uint64_t stripe_size_bytes, int32_t aggregators);

// The storage target of byte `offset` of a file striped C ways (Lustre-style RAID-0):
// (offset / stripe_size) mod C.
int32_t StripeTarget(uint64_t offset, uint64_t stripe_size_bytes, int32_t stripe_count);

}  // namespace iorelay::collective
