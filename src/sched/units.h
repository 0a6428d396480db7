// Quantities with units in strings ("64KiB", "0.9ms", "100MBps"), as parameters and
// platform files write them; parsing and exact formatting, shared by sched and device.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace iorelay::units {

// Bytes: a number with an optional suffix B, K/KB (1000), KiB (1024), M/MB, MiB, G/GB, GiB,
// T/TB, TiB. A bare number is bytes. Fails (EINVAL) on anything else or on overflow.
Result<uint64_t> ParseBytes(std::string_view text);
// Durations: a number with suffix ns, us, ms or s (a bare number is nanoseconds).
Result<int64_t> ParseDurationNs(std::string_view text);
// Bandwidth in bytes per second: a byte quantity followed by "ps" or "/s" ("100MBps",
// "1GiB/s"); a bare number is bytes per second.
Result<double> ParseBytesPerSecond(std::string_view text);

// Exact, re-parseable formatting: the largest binary unit that divides the value.
std::string FormatBytes(uint64_t bytes);
// The largest of s, ms, us, ns that divides the value exactly.
std::string FormatDurationNs(int64_t ns);

}  // namespace iorelay::units
