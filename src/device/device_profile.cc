// Device profiles: the named presets and the override syntax.
#include "device/device_profile.h"

#include <algorithm>

#include "common/units.h"

namespace iorelay::device {
namespace {

// The text up to the first `separator` (all of it when there is none); `text` keeps the rest.
std::string_view PopItem(std::string_view* text, char separator) {
  const size_t at = text->find(separator);
  const std::string_view item = text->substr(0, at);
  *text = at == std::string_view::npos ? std::string_view() : text->substr(at + 1);
  return item;
}

// "32KiB:200us/1MiB:4ms": sizes strictly increasing, durations not negative.
Result<std::vector<std::pair<uint64_t, int64_t>>> ParseAccessTimes(std::string_view text) {
  std::vector<std::pair<uint64_t, int64_t>> points;
  while (!text.empty()) {
    const std::string_view point = PopItem(&text, '/');
    size_t colon = point.find(':');
    if (colon == std::string_view::npos) {
      return Status::InvalidArgument("device access point '" + std::string(point) +
                                     "' is not <size>:<duration>");
    }
    auto size = units::ParseBytes(point.substr(0, colon));
    if (!size.ok()) return size.status();
    auto ns = units::ParseDurationNs(point.substr(colon + 1));
    if (!ns.ok()) return ns.status();
    if (!points.empty() && *size <= points.back().first) {
      return Status::InvalidArgument("device access sizes must increase ('" + std::string(point) +
                                     "')");
    }
    points.emplace_back(*size, *ns);
  }
  if (points.empty()) return Status::InvalidArgument("device access times are empty");
  return points;
}

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
    const std::string_view item = PopItem(&text, ',');
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
      } else if (key == "write") {
        auto v = units::ParseDurationNs(value);
        if (!v.ok()) return v.status();
        p.write_ns = *v;
      } else if (key == "access") {
        auto v = ParseAccessTimes(value);
        if (!v.ok()) return v.status();
        p.access_ns = std::move(*v);
      } else {
        return Status::InvalidArgument("unknown device key '" + std::string(key) +
                                       "' (known: seek, bw, write, access)");
      }
    }
    first = false;
  }
  if (first) return Status::InvalidArgument("empty device profile");
  return p;
}

double TransferNs(const DeviceProfile& p, uint64_t length) {
  const auto& pts = p.access_ns;
  if (pts.empty()) return static_cast<double>(length) * 1e9 / p.bytes_per_s;
  if (length <= pts.front().first) return static_cast<double>(pts.front().second);
  if (length >= pts.back().first) {
    return static_cast<double>(pts.back().second) +
           static_cast<double>(length - pts.back().first) * 1e9 / p.bytes_per_s;
  }
  auto hi = std::upper_bound(pts.begin(), pts.end(), length,
                             [](uint64_t v, const auto& point) { return v < point.first; });
  auto lo = hi - 1;
  const double f =
      static_cast<double>(length - lo->first) / static_cast<double>(hi->first - lo->first);
  return static_cast<double>(lo->second) + f * static_cast<double>(hi->second - lo->second);
}

nlohmann::json ToJson(const DeviceProfile& p) {
  nlohmann::json j{{"name", p.name},
                   {"seek", units::FormatDurationNs(p.seek_ns)},
                   {"bw_bytes_per_s", p.bytes_per_s}};
  if (!p.access_ns.empty()) {
    std::string access;
    for (const auto& [bytes, ns] : p.access_ns) {
      if (!access.empty()) access += '/';
      access += units::FormatBytes(bytes) + ":" + units::FormatDurationNs(ns);
    }
    j["access"] = access;
  }
  if (p.write_ns != 0) j["write"] = units::FormatDurationNs(p.write_ns);
  return j;
}

}  // namespace iorelay::device
