// The rows of the client's environment table and the checks their types make (env_table.h).
#include "client/env_table.h"

#include <cerrno>
#include <cstdlib>

namespace iorelay::client {
namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t end = s.find(sep, start);
    std::string part = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!part.empty()) out.push_back(part);
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

std::string TrimSlashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

// Any text that `apply` accepts.
EnvVar Text(EnvVarId id, std::string values, std::string default_value, std::string meaning,
            std::function<Status(const std::string&, ParsedEnv*)> apply) {
  return {.id = id,
          .name = EnvName(id),
          .values = std::move(values),
          .default_value = std::move(default_value),
          .meaning = std::move(meaning),
          .apply = std::move(apply)};
}

// An integer in [min, max]: below min, or not a number in [0, max], is an error naming it.
EnvVar Count(EnvVarId id, int64_t min, int64_t max, std::string default_value, std::string meaning,
             std::function<void(ParsedEnv*, int64_t)> set) {
  std::string name = EnvName(id);
  std::string values = "integer " + std::to_string(min) + ".." + std::to_string(max);
  auto apply = [name, min, max, set](const std::string& text, ParsedEnv* env) -> Status {
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || *end != '\0' || x < 0 || x > max) {
      return Status::InvalidArgument(name + "='" + text + "' is not a valid number");
    }
    if (x < min) return Status::InvalidArgument(name + " must be >= " + std::to_string(min));
    set(env, x);
    return Status::Ok();
  };
  return Text(id, std::move(values), std::move(default_value), std::move(meaning),
              std::move(apply));
}

// One of `choices`; `set` gets the index of the one given.
EnvVar Choice(EnvVarId id, std::vector<std::string> choices, std::string default_value,
              std::string meaning, std::function<void(ParsedEnv*, size_t)> set) {
  std::string name = EnvName(id), values, alternatives;
  for (size_t i = 0; i < choices.size(); ++i) {
    values += (i ? " | " : "") + choices[i];
    alternatives += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  }
  auto apply = [name, choices, alternatives, set](const std::string& text,
                                                  ParsedEnv* env) -> Status {
    for (size_t i = 0; i < choices.size(); ++i) {
      if (text == choices[i]) {
        set(env, i);
        return Status::Ok();
      }
    }
    return Status::InvalidArgument(name + " must be " + alternatives + ", not '" + text + "'");
  };
  return Text(id, std::move(values), std::move(default_value), std::move(meaning),
              std::move(apply));
}

// Read where it is used, in `read_by`.
EnvVar ReadBy(EnvVarId id, std::string values, std::string default_value, std::string meaning,
              std::string read_by) {
  return {.id = id,
          .name = EnvName(id),
          .values = std::move(values),
          .default_value = std::move(default_value),
          .meaning = std::move(meaning),
          .read_by = std::move(read_by)};
}

EnvVar CarriedByRun(EnvVar v) {
  v.run_file = true;
  return v;
}

Status ApplyServers(const std::string& text, ParsedEnv* env) {
  for (const std::string& s : Split(text, ',')) {
    Result<Address> a = ParseAddress(s);
    if (!a.ok()) return Status::InvalidArgument("IORELAY_SERVERS: " + a.status().message());
    env->cfg.servers.push_back(*a);
  }
  if (env->cfg.servers.empty()) return Status::InvalidArgument("IORELAY_SERVERS is empty");
  return Status::Ok();
}

Status ApplyPrefixes(const std::string& text, ParsedEnv* env) {
  for (const std::string& prefix : Split(text, ':')) {
    if (prefix[0] != '/') {
      return Status::InvalidArgument("IORELAY_PREFIX entries must be absolute, not '" + prefix +
                                     "'");
    }
    env->cfg.prefixes.push_back(TrimSlashes(prefix));
  }
  return Status::Ok();
}

Status ApplyPlacement(const std::string& text, ParsedEnv* env) {
  Result<PlacementPolicy> policy = ParsePlacementName(text);
  if (!policy.ok()) {
    return Status::InvalidArgument("IORELAY_PLACEMENT: " + policy.status().message());
  }
  env->cfg.placement = *policy;
  return Status::Ok();
}

Status ApplyDirectRoots(const std::string& text, ParsedEnv* env) {
  for (const std::string& pair : Split(text, ':')) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || pair[0] != '/' || eq + 1 >= pair.size() || pair[eq + 1] != '/') {
      return Status::InvalidArgument("IORELAY_DIRECT_ROOT entries are /PREFIX=/ROOT, not '" + pair +
                                     "'");
    }
    env->cfg.direct_roots.emplace_back(TrimSlashes(pair.substr(0, eq)),
                                       TrimSlashes(pair.substr(eq + 1)));
  }
  return Status::Ok();
}

std::vector<EnvVar> MakeTable() {
  using Id = EnvVarId;
  std::vector<EnvVar> t;
  t.push_back(
      CarriedByRun(Text(Id::kServers, "comma-separated tcp:HOST:PORT, unix:PATH or unix:@NAME", "",
                        "the daemons' addresses; unset, the interposer is inert", ApplyServers)));
  t.push_back(CarriedByRun(Text(Id::kSecretFile, "path of a 0600 file", "",
                                "the job credential; never sent in clear",
                                [](const std::string& text, ParsedEnv* e) {
                                  e->cfg.secret_file = text;
                                  return Status::Ok();
                                })));
  t.push_back(CarriedByRun(Text(Id::kPrefix, "colon-separated absolute paths", "none",
                                "the path prefixes whose files are forwarded", ApplyPrefixes)));
  t.push_back(CarriedByRun(
      Text(Id::kPlacement, "block | round-robin | file-hash | map:FILE", "block",
           "which daemon serves a client node's files (docs/placement.md)", ApplyPlacement)));
  t.push_back(
      CarriedByRun(Count(Id::kRanksPerNode, 1, 1 << 20, "1",
                         "ranks per client node: the launcher's rank and size are divided by it",
                         [](ParsedEnv* e, int64_t v) { e->ranks_per_node = v; })));
  t.push_back(Count(Id::kNodeId, 0, UINT32_MAX,
                    "the launcher's rank (OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID) / "
                    "IORELAY_RANKS_PER_NODE, else 0",
                    "this process's client node, for placement",
                    [](ParsedEnv* e, int64_t v) { e->node_id = static_cast<uint32_t>(v); }));
  t.push_back(CarriedByRun(
      Count(Id::kNodes, 0, UINT32_MAX,
            "the launcher's world size (OMPI_COMM_WORLD_SIZE, PMI_SIZE or SLURM_NTASKS) / "
            "IORELAY_RANKS_PER_NODE, else the node id + 1 (0: the same)",
            "the number of client nodes (block placement)",
            [](ParsedEnv* e, int64_t v) { e->nodes = static_cast<uint32_t>(v); })));
  t.push_back(Count(Id::kTimeoutMs, 1, 24 * 3600 * 1000, "5000",
                    "liveness bound: a daemon that sends no reply nor heartbeat for this long is "
                    "dead (EIO, or failover)",
                    [](ParsedEnv* e, int64_t v) { e->cfg.timeout_ms = static_cast<int>(v); }));
  t.push_back(Count(
      Id::kMaxConnections, 0, 4096, "64",
      "connections per daemon (0: 1), so requests in flight; asynchronous I/O "
      "takes at most half",
      [](ParsedEnv* e, int64_t v) { e->cfg.max_connections = v > 0 ? static_cast<int>(v) : 1; }));
  t.push_back(Count(Id::kSpinUs, 0, 10'000, "50",
                    "how long (us) a thread waiting for a reply from a daemon of this host looks "
                    "for it before it sleeps; 0: never",
                    [](ParsedEnv* e, int64_t v) { e->cfg.spin_us = static_cast<int>(v); }));
  t.push_back(Choice(Id::kSpinAdapt, {"off", "on"}, "off",
                     "no spin for replies while /proc/loadavg's running threads outnumber this "
                     "process's CPUs (docs/interposer.md, Waiting for replies)",
                     [](ParsedEnv* e, size_t i) { e->cfg.spin_adapt = i == 1; }));
  t.push_back(Choice(Id::kFallback, {"eio", "direct"}, "eio",
                     "on a dead daemon, fail with EIO, or reopen the file directly (without "
                     "O_CREAT, O_EXCL, O_TRUNC) at its offset",
                     [](ParsedEnv* e, size_t i) {
                       e->cfg.fallback = i == 0 ? Fallback::kEio : Fallback::kDirect;
                     }));
  t.push_back(Text(Id::kDirectRoot, "colon-separated /PREFIX=/ROOT pairs",
                   "none: paths as they are",
                   "for the direct fallback, where a forwarded prefix lives in the real file "
                   "system (the daemons' --export pairs)",
                   ApplyDirectRoots));
  t.push_back(Choice(Id::kFailover, {"on", "off"}, "on",
                     "with two or more daemons and no direct fallback, a dead daemon's files "
                     "move to a surviving one",
                     [](ParsedEnv* e, size_t i) { e->cfg.failover = i == 0; }));
  t.push_back(Text(Id::kMapFile, "absolute path of a job map", "none: every daemon, always",
                   "a pool job's daemons now, of IORELAY_SERVERS (iorelay run --pool writes "
                   "it); re-read every 0.1 s at most, files move to the daemons it names",
                   [](const std::string& text, ParsedEnv* e) {
                     if (text.empty() || text[0] != '/') {
                       return Status::InvalidArgument("IORELAY_MAP_FILE must be absolute, not '" +
                                                      text + "'");
                     }
                     e->cfg.map_file = text;
                     return Status::Ok();
                   }));
  t.push_back(Choice(Id::kSeal, {"on", "off"}, "on",
                     "over TCP, require tags on every frame; off only to measure their cost "
                     "against `iorelayd --seal off`",
                     [](ParsedEnv* e, size_t i) { e->cfg.seal = i == 0; }));
  t.push_back(CarriedByRun(
      Choice(Id::kWriteBehind, {"off", "on"}, "off",
             "buffered writes are coalesced in the client (1 MiB per file) and sent within "
             "0.2 s, at fsync, close, locks, or before any other call; errors show at the "
             "file's next call, fsync or close (docs/interposer.md, Write-behind)",
             [](ParsedEnv* e, size_t i) { e->cfg.write_behind = i == 1; })));
  t.push_back(CarriedByRun(
      Choice(Id::kReadAhead, {"off", "on"}, "off",
             "sequential small reads of read-only files are answered from 1 MiB reads, "
             "for at most IORELAY_ATTR_CACHE_MS (docs/interposer.md, Write-behind)",
             [](ParsedEnv* e, size_t i) { e->cfg.read_ahead = i == 1; })));
  t.push_back(CarriedByRun(
      Count(Id::kAttrCacheMs, 0, 3'600'000, "1000",
            "how long (ms) attributes an open or a listing carried answer fstat and stat, and a "
            "read-ahead window answers reads (NFS's actimeo); 0: never",
            [](ParsedEnv* e, int64_t v) { e->cfg.attr_cache_ms = static_cast<int>(v); })));
  t.push_back(CarriedByRun(
      Choice(Id::kStatPrefetch, {"off", "on"}, "off",
             "after 8 stats of entries of one directory that the cache could not answer, the "
             "directory is listed once with its entries' attributes (docs/interposer.md, "
             "Round trips)",
             [](ParsedEnv* e, size_t i) { e->cfg.stat_prefetch = i == 1; })));
  t.push_back(ReadBy(Id::kShm, "off, 0 or no: off; anything else: on", "on",
                     "connections to a daemon of this host move to shared memory",
                     "src/client/connection.cc"));
  t.push_back(ReadBy(Id::kMmapCopyMax, "size, e.g. 4GiB", "1GiB",
                     "the largest private mapping of a forwarded file made as a copy; larger "
                     "ones fail with ENODEV",
                     "src/preload/wrappers_mmap.cc"));
  t.push_back(ReadBy(Id::kStageDir, "path of a directory", "${TMPDIR:-/tmp}/iorelay-dl-UID",
                     "where forwarded shared objects are copied to be loaded",
                     "src/preload/dl_forwarded.cc"));
  t.push_back(ReadBy(Id::kCwd, "set by the interposer", "unset",
                     "across exec, the forwarded working directory", "src/preload/cwd.cc"));
  t.push_back(ReadBy(Id::kInheritFds, "set by the interposer", "unset",
                     "across exec, the forwarded descriptors the new program inherits",
                     "src/preload/exec_env.cc"));
  return t;
}

}  // namespace

const std::vector<EnvVar>& EnvTable() {
  // Never destroyed, so that a client created while the process exits (the interposer runs in
  // any program, destructors included) still finds it.
  static const auto* table = new std::vector<EnvVar>(MakeTable());
  return *table;
}

const EnvVar& Env(EnvVarId id) { return EnvTable()[static_cast<size_t>(id)]; }

}  // namespace iorelay::client
