// Which daemon serves which client node or file. Pure functions, no OS access, so they are
// unit-tested directly and shared with tools that plan placements.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace iorelay::client {

enum class PlacementKind { kBlock, kRoundRobin, kFileHash, kMap };

struct PlacementPolicy {
  PlacementKind kind = PlacementKind::kBlock;
  std::string map_file;             // kMap: where the mapping came from
  std::map<uint32_t, int> mapping;  // kMap: node id → daemon index
};

// "block" | "round-robin" | "file-hash" | "map:FILE" (the file's content is parsed by the
// caller into `mapping` with ParsePlacementMap).
Result<PlacementPolicy> ParsePlacementName(const std::string& text);

// {"mapping": {"<node id>": <daemon index>, ...}}; every index must be < servers.
Result<std::map<uint32_t, int>> ParsePlacementMap(std::string_view json, int servers);

// The daemon for client node `node` of `nodes` with `servers` daemons (not for kFileHash).
// block: node n of N → n*K/N (contiguous blocks, as FORGE); round-robin: n mod K;
// map: the mapping (EINVAL if the node is absent).
Result<int> PlaceNode(const PlacementPolicy& p, uint32_t node, uint32_t nodes, int servers);

// kFileHash: a stable hash (FNV-1a 64) of the absolute path, mod servers.
int PlaceFile(std::string_view path, int servers);

// The daemon that owns a file's record locks, whatever the placement: hash(dev, ino) mod K.
int LockOwner(uint64_t dev, uint64_t ino, int servers);

uint64_t Fnv1a64(std::string_view bytes);

}  // namespace iorelay::client
