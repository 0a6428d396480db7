// A storage device as data: positioning cost and streaming bandwidth, parsed from "hdd",
// "ssd" or "seek=8ms,bw=100MBps" (a named profile may be followed by overrides).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace iorelay::device {

struct DeviceProfile {
  std::string name = "hdd";
  int64_t seek_ns = 8'000'000;  // paid when an access does not continue the previous one
  double bytes_per_s = 100e6;   // streaming bandwidth
};

// "hdd" (8 ms, 100 MB/s), "ssd" (100 us, 500 MB/s), "seek=<duration>,bw=<bandwidth>",
// or "hdd,bw=150MBps". Fails (EINVAL) on unknown names, keys or values.
Result<DeviceProfile> ParseDeviceProfile(std::string_view text);
// {"name":..., "seek":"8ms", "bw_bytes_per_s":1e8}: the effective profile.
nlohmann::json ToJson(const DeviceProfile& p);

}  // namespace iorelay::device
