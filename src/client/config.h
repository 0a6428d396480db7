// The client's configuration, read from the environment (the variables: env_table.h),
// validated once at creation; parsing is pure so tests pass their own variables.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "client/address.h"
#include "client/placement.h"
#include "common/status.h"

namespace iorelay::client {

enum class Fallback { kEio, kDirect };

struct ClientConfig {
  std::vector<Address> servers;
  std::string secret_file;
  std::vector<std::string> prefixes;  // normalised, without trailing '/'
  PlacementPolicy placement;
  uint32_t node_id = 0;
  uint32_t nodes = 1;
  int timeout_ms = 5000;
  Fallback fallback = Fallback::kEio;
  // IORELAY_DIRECT_ROOT: where a forwarded prefix lives in the real file system, for the
  // direct fallback: "PREFIX=ROOT[:PREFIX=ROOT...]". A path under no pair is used as is.
  std::vector<std::pair<std::string, std::string>> direct_roots;
  int max_connections = 64;  // per daemon (IORELAY_MAX_CONNECTIONS)
  // IORELAY_FAILOVER=on|off (on): with two or more daemons and no direct fallback, the files of
  // a daemon that stops answering move to a surviving one (docs/interposer.md, "Failover").
  bool failover = true;
  // IORELAY_MAP_FILE (none): a pool job's map (job_map.h): the daemons of `servers` the job
  // uses now. Re-read at most every kMapCheckNs and when a daemon refuses; files move to the
  // daemons it names (docs/arbitration.md, "Re-mapping a running job").
  std::string map_file;
  // IORELAY_SPIN_US (50; 0: never): how long a thread waiting for a reply from a daemon of
  // this host (shared memory or a Unix socket) looks for it, yielding the CPU, before it
  // sleeps (docs/interposer.md, Waiting for replies).
  int spin_us = 50;
  // IORELAY_SPIN_ADAPT=on|off (off): no spin while runnable threads outnumber this process's
  // CPUs (spin_wait.h).
  bool spin_adapt = false;
  // IORELAY_SEAL=on|off (on): over TCP, tags on every frame are required; off only to measure
  // their cost against `iorelayd --seal off` (docs/security.md).
  bool seal = true;
  // IORELAY_WRITE_BEHIND=on|off (off): buffered writes are coalesced in the client and sent
  // later; IORELAY_READ_AHEAD=on|off (off): sequential small reads of read-only files are
  // answered from one larger read (docs/interposer.md, "Write-behind and read-ahead").
  bool write_behind = false;
  bool read_ahead = false;
  // IORELAY_ATTR_CACHE_MS (1000): how long attributes an open or a listing carried answer
  // fstat and stat (NFS's actimeo); IORELAY_STAT_PREFETCH=on|off (off): a directory whose
  // entries are stat'ed one by one is listed once with their attributes (listed_attrs.h).
  int attr_cache_ms = 1000;
  bool stat_prefetch = false;
};

using GetEnv = std::function<const char*(const char*)>;

// Everything but the map file's content (kMap: the caller reads placement.map_file).
Result<ClientConfig> ParseConfig(const GetEnv& getenv);

// True if `path` equals `prefix` or lies beneath it (component boundary).
bool PathUnder(std::string_view path, std::string_view prefix);

// The real path for the direct fallback.
std::string DirectPath(const ClientConfig& cfg, const std::string& path);

}  // namespace iorelay::client
