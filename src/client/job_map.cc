// Parsing a pool job's map file and indexing its set of daemons.
#include "client/job_map.h"

#include <bit>
#include <nlohmann/json.hpp>
#include <string>

namespace iorelay::client {

Result<JobMap> ParseJobMap(std::string_view json, int servers) {
  if (servers > kMaxMappedServers) {
    return Status::InvalidArgument("a map takes at most " + std::to_string(kMaxMappedServers) +
                                   " daemons, not " + std::to_string(servers));
  }
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("epoch") ||
      !doc["epoch"].is_number_unsigned() || !doc.contains("active") || !doc["active"].is_array()) {
    return Status::InvalidArgument("a job map is {\"epoch\": N, \"active\": [index, ...]}");
  }
  JobMap m;
  m.epoch = doc["epoch"].get<uint64_t>();
  if (m.epoch == 0) return Status::InvalidArgument("a job map's epoch starts at 1");
  for (const auto& v : doc["active"]) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= servers) {
      return Status::InvalidArgument("a job map's daemons are indices in [0, " +
                                     std::to_string(servers) + ")");
    }
    m.active |= uint64_t{1} << v.get<int64_t>();
  }
  if (m.active == 0) return Status::InvalidArgument("a job map names no daemon");
  if (doc.contains("locks")) {
    const nlohmann::json& l = doc["locks"];
    if (!l.is_number_integer() || l.get<int64_t>() < 0 || l.get<int64_t>() >= servers ||
        !((m.active >> l.get<int64_t>()) & 1)) {
      return Status::InvalidArgument("a job map's lock daemon is one of its active daemons");
    }
    m.locks = static_cast<int>(l.get<int64_t>());
  }
  return m;
}

int MaskCount(uint64_t mask) { return std::popcount(mask); }

int MaskNth(uint64_t mask, int n) {
  for (int i = 0; i < n; ++i) mask &= mask - 1;  // drop the lowest set bits
  return mask == 0 ? -1 : std::countr_zero(mask);
}

}  // namespace iorelay::client
