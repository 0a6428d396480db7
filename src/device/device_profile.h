// A storage device as data: positioning cost and streaming bandwidth, parsed from "hdd",
// "ssd" or "seek=8ms,bw=100MBps" (a named profile may be followed by overrides), and optionally
// measured access times by size ("access=32KiB:200us/1MiB:4ms"), for storage whose time per
// access is not a straight line in the size (a write cache that takes small accesses, partial
// blocks that cost a read-modify-write).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace iorelay::device {

struct DeviceProfile {
  std::string name = "hdd";
  int64_t seek_ns = 8'000'000;  // paid when an access does not continue the previous one
  double bytes_per_s = 100e6;   // streaming bandwidth
  // (bytes, ns), sizes strictly increasing: when not empty, the time to move an access's data
  // is read from it (linear between points, the first point's time below it, the last point's
  // time plus the rest at bytes_per_s above it) instead of length / bytes_per_s. A seek is
  // still added when the access does not continue the previous one.
  std::vector<std::pair<uint64_t, int64_t>> access_ns;
  // Added to every write access: storage that acknowledges a write later than a read of the
  // same size (a file server that writes through, a disk whose cache is off).
  int64_t write_ns = 0;
};

// The time to move `length` bytes (no seek) under `p`.
double TransferNs(const DeviceProfile& p, uint64_t length);

// "hdd" (8 ms, 100 MB/s), "ssd" (100 us, 500 MB/s), "seek=<duration>,bw=<bandwidth>",
// or "hdd,bw=150MBps"; "write=<duration>" and "access=..." are optional. Fails (EINVAL) on unknown
// names, keys or values.
Result<DeviceProfile> ParseDeviceProfile(std::string_view text);
// {"name":..., "seek":"8ms", "bw_bytes_per_s":1e8}: the effective profile.
nlohmann::json ToJson(const DeviceProfile& p);

}  // namespace iorelay::device
