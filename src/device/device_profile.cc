// Device profiles: the named presets and the override syntax.
#include "device/device_profile.h"

#include "common/units.h"

namespace iorelay::device {
namespace {

bool Preset(std::string_view name, DeviceProfile* p) {
  if (name == "hdd") {
    *p = DeviceProfile{"hdd", 8'000'000, 100e6};
  } else if (name == "ssd") {
    *p = DeviceProfile{"ssd", 100'000, 500e6};
  } else {
    return false;
  }
  return true;
}

}  // namespace

Result<DeviceProfile> ParseDeviceProfile(std::string_view text) {
  DeviceProfile p;
  p.name = "custom";
  bool first = true;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      if (!first || !Preset(item, &p)) {
        return Status::InvalidArgument("unknown device profile '" + std::string(item) +
                                       "' (known: hdd, ssd)");
      }
    } else {
      std::string_view key = item.substr(0, eq);
      std::string_view value = item.substr(eq + 1);
      if (key == "seek") {
        auto v = units::ParseDurationNs(value);
        if (!v.ok()) return v.status();
        p.seek_ns = *v;
      } else if (key == "bw") {
        auto v = units::ParseBytesPerSecond(value);
        if (!v.ok()) return v.status();
        p.bytes_per_s = *v;
      } else {
        return Status::InvalidArgument("unknown device key '" + std::string(key) +
                                       "' (known: seek, bw)");
      }
    }
    first = false;
  }
  if (first) return Status::InvalidArgument("empty device profile");
  return p;
}

nlohmann::json ToJson(const DeviceProfile& p) {
  return nlohmann::json{{"name", p.name},
                        {"seek", units::FormatDurationNs(p.seek_ns)},
                        {"bw_bytes_per_s", p.bytes_per_s}};
}

}  // namespace iorelay::device
