// Even and stripe-aligned file domains of collective I/O aggregators (see file_domains.h).
#include "collective/file_domains.h"

#include <algorithm>

namespace iorelay::collective {

Result<std::vector<FileDomain>> EvenDomains(uint64_t begin, uint64_t end, int32_t aggregators) {
  if (aggregators < 1) return Status::InvalidArgument("aggregators must be >= 1");
  if (end < begin) return Status::InvalidArgument("a domain range ends before it begins");
  const uint64_t a = static_cast<uint64_t>(aggregators);
  const uint64_t each = (end - begin + a - 1) / a;
  std::vector<FileDomain> out;
  for (uint64_t i = 0; i < a; ++i) {
    const uint64_t b = std::min(end, begin + i * each);
    out.push_back({b, std::min(end, b + each)});
  }
  return out;
}

int32_t StripeAggregator(uint64_t offset, uint64_t stripe_size_bytes, int32_t aggregators) {
  return static_cast<int32_t>(offset / stripe_size_bytes % static_cast<uint64_t>(aggregators));
}

int32_t StripeTarget(uint64_t offset, uint64_t stripe_size_bytes, int32_t stripe_count) {
  return StripeAggregator(offset, stripe_size_bytes, stripe_count);
}

}  // namespace iorelay::collective
