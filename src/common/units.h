// Quantities written with units ("64KiB", "0.9ms", "10Gbps"): one rule for every tool, shared
// with python/iorelay/units.py and checked by both against tests/data/units_cases.json.
//
// Sizes (bytes), as IOR, fio and FORGE's data write them: a bare number is bytes; K, M, G, T
// (or k, m, g, t) and KiB, MiB, GiB, TiB are powers of 1024; kB (or KB), MB, GB, TB are powers
// of 1000; B alone is bytes. A fraction must come to a whole number of bytes ("1.5K" = 1536).
// Rates (bytes per second), as SimGrid platform files write them: a number, an optional prefix
// k (or K), M, G, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of 1024), then B (bytes) or b
// (bits), then "ps" or "/s": "10Gbps" = 1.25e9 bytes/s, "1.5GBps" = 1.5e9, "1GiB/s" = 2^30.
// Durations: a number with ns, us, ms or s; 0 may stand alone.
// Spaces around the number and unit are allowed; anything else fails with EINVAL and a message
// naming the accepted forms.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace iorelay::units {

Result<uint64_t> ParseBytes(std::string_view text);
Result<int64_t> ParseDurationNs(std::string_view text);
Result<double> ParseBytesPerSecond(std::string_view text);

// Exact, re-parseable formatting: the largest binary unit that divides the value.
std::string FormatBytes(uint64_t bytes);
// The largest of s, ms, us, ns that divides the value exactly.
std::string FormatDurationNs(int64_t ns);

}  // namespace iorelay::units
