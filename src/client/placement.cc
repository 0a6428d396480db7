// Placement policies: block, round-robin, file-hash and explicit maps; lock ownership.
#include "client/placement.h"

#include <nlohmann/json.hpp>

#include "common/mix64.h"

namespace iorelay::client {

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

Result<PlacementPolicy> ParsePlacementName(const std::string& text) {
  PlacementPolicy p;
  if (text.empty() || text == "block") {
    p.kind = PlacementKind::kBlock;
  } else if (text == "round-robin") {
    p.kind = PlacementKind::kRoundRobin;
  } else if (text == "file-hash") {
    p.kind = PlacementKind::kFileHash;
  } else if (text.rfind("map:", 0) == 0 && text.size() > 4) {
    p.kind = PlacementKind::kMap;
    p.map_file = text.substr(4);
  } else {
    return Status::InvalidArgument("unknown placement '" + text +
                                   "' (block, round-robin, file-hash or map:FILE)");
  }
  return p;
}

Result<std::map<uint32_t, int>> ParsePlacementMap(std::string_view json, int servers) {
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("mapping") ||
      !doc["mapping"].is_object()) {
    return Status::InvalidArgument("placement map must be {\"mapping\": {\"<node>\": <index>}}");
  }
  std::map<uint32_t, int> out;
  for (const auto& [key, value] : doc["mapping"].items()) {
    char* end = nullptr;
    unsigned long node = std::strtoul(key.c_str(), &end, 10);
    if (key.empty() || *end != '\0' || node > UINT32_MAX) {
      return Status::InvalidArgument("placement map: node id '" + key + "' is not a number");
    }
    if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() >= servers) {
      return Status::InvalidArgument("placement map: node " + key +
                                     " needs a daemon index in [0, " + std::to_string(servers) +
                                     ")");
    }
    out[static_cast<uint32_t>(node)] = static_cast<int>(value.get<int64_t>());
  }
  return out;
}

Result<int> PlaceNode(const PlacementPolicy& p, uint32_t node, uint32_t nodes, int servers) {
  if (servers <= 0) return Status::InvalidArgument("no daemons");
  switch (p.kind) {
    case PlacementKind::kBlock: {
      uint64_t n = nodes == 0 ? 1 : nodes;
      uint64_t id = node % n;  // a node id beyond the count wraps rather than overflows
      return static_cast<int>(id * static_cast<uint64_t>(servers) / n);
    }
    case PlacementKind::kRoundRobin:
      return static_cast<int>(node % static_cast<uint32_t>(servers));
    case PlacementKind::kMap: {
      auto it = p.mapping.find(node);
      if (it == p.mapping.end()) {
        return Status::InvalidArgument("placement map " + p.map_file + " has no entry for node " +
                                       std::to_string(node));
      }
      return it->second;
    }
    case PlacementKind::kFileHash:
      return Status::InvalidArgument("file-hash placement is per file");
  }
  return Status::InvalidArgument("bad placement");
}

int PlaceFile(std::string_view path, int servers) {
  // FNV's low bits depend on few input bits: mix before taking a small modulus.
  return static_cast<int>(Mix64(Fnv1a64(path)) % static_cast<uint64_t>(servers));
}

int LockOwner(uint64_t dev, uint64_t ino, int servers) {
  return static_cast<int>(Mix64(dev * kGoldenGamma ^ ino) % static_cast<uint64_t>(servers));
}

}  // namespace iorelay::client
