// Environment parsing: servers, prefixes, placement, node identity, liveness, fallback.
#include "client/config.h"

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

// A non-negative integer variable; `*out` unchanged when unset.
Status ParseUint(const GetEnv& getenv, const char* name, int64_t max, int64_t* out) {
  const char* v = getenv(name);
  if (!v || !*v) return Status::Ok();
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(v, &end, 10);
  if (errno != 0 || *end != '\0' || x < 0 || x > max) {
    return Status::InvalidArgument(std::string(name) + "='" + v + "' is not a valid number");
  }
  *out = x;
  return Status::Ok();
}

// `name` = on or off; unset or empty keeps `*out`.
Status ParseOnOff(const GetEnv& getenv, const char* name, bool* out) {
  const char* v = getenv(name);
  const std::string text = v ? v : "";
  if (text.empty()) return Status::Ok();
  if (text != "on" && text != "off") {
    return Status::InvalidArgument(std::string(name) + " must be on or off, not '" + text + "'");
  }
  *out = text == "on";
  return Status::Ok();
}

const char* FirstSet(const GetEnv& getenv, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    const char* v = getenv(n);
    if (v && *v) return n;
  }
  return nullptr;
}

}  // namespace

bool PathUnder(std::string_view path, std::string_view prefix) {
  if (prefix == "/") return !path.empty() && path[0] == '/';
  if (path.size() < prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '/';
}

std::string DirectPath(const ClientConfig& cfg, const std::string& path) {
  for (const auto& [prefix, root] : cfg.direct_roots) {
    if (PathUnder(path, prefix)) return root + path.substr(prefix == "/" ? 0 : prefix.size());
  }
  return path;
}

Result<ClientConfig> ParseConfig(const GetEnv& getenv) {
  ClientConfig cfg;
  const char* servers = getenv("IORELAY_SERVERS");
  if (!servers || !*servers) return Status::InvalidArgument("IORELAY_SERVERS is not set");
  for (const std::string& s : Split(servers, ',')) {
    Result<Address> a = ParseAddress(s);
    if (!a.ok()) return Status::InvalidArgument("IORELAY_SERVERS: " + a.status().message());
    cfg.servers.push_back(*a);
  }
  if (cfg.servers.empty()) return Status::InvalidArgument("IORELAY_SERVERS is empty");
  const char* secret = getenv("IORELAY_SECRET_FILE");
  if (!secret || !*secret) return Status::InvalidArgument("IORELAY_SECRET_FILE is not set");
  cfg.secret_file = secret;
  if (const char* p = getenv("IORELAY_PREFIX")) {
    for (const std::string& prefix : Split(p, ':')) {
      if (prefix[0] != '/')
        return Status::InvalidArgument("IORELAY_PREFIX entries must be absolute, not '" + prefix +
                                       "'");
      cfg.prefixes.push_back(TrimSlashes(prefix));
    }
  }
  const char* placement = getenv("IORELAY_PLACEMENT");
  Result<PlacementPolicy> policy = ParsePlacementName(placement ? placement : "");
  if (!policy.ok())
    return Status::InvalidArgument("IORELAY_PLACEMENT: " + policy.status().message());
  cfg.placement = *policy;

  int64_t ranks_per_node = 1, timeout = 5000, max_conns = 64;
  IORELAY_RETURN_IF_ERROR(ParseUint(getenv, "IORELAY_RANKS_PER_NODE", 1 << 20, &ranks_per_node));
  if (ranks_per_node == 0) return Status::InvalidArgument("IORELAY_RANKS_PER_NODE must be >= 1");
  int64_t node = 0, nodes = 0;
  if (const char* name = FirstSet(getenv, {"IORELAY_NODE_ID"})) {
    IORELAY_RETURN_IF_ERROR(ParseUint(getenv, name, UINT32_MAX, &node));
  } else if (const char* rank =
                 FirstSet(getenv, {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"})) {
    IORELAY_RETURN_IF_ERROR(ParseUint(getenv, rank, UINT32_MAX, &node));
    node /= ranks_per_node;
  }
  if (const char* name = FirstSet(getenv, {"IORELAY_NODES"})) {
    IORELAY_RETURN_IF_ERROR(ParseUint(getenv, name, UINT32_MAX, &nodes));
  } else if (const char* size =
                 FirstSet(getenv, {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})) {
    IORELAY_RETURN_IF_ERROR(ParseUint(getenv, size, UINT32_MAX, &nodes));
    nodes = (nodes + ranks_per_node - 1) / ranks_per_node;
  }
  cfg.node_id = static_cast<uint32_t>(node);
  cfg.nodes = static_cast<uint32_t>(nodes > 0 ? nodes : node + 1);
  IORELAY_RETURN_IF_ERROR(ParseUint(getenv, "IORELAY_TIMEOUT_MS", 24 * 3600 * 1000, &timeout));
  if (timeout == 0) return Status::InvalidArgument("IORELAY_TIMEOUT_MS must be > 0");
  cfg.timeout_ms = static_cast<int>(timeout);
  IORELAY_RETURN_IF_ERROR(ParseUint(getenv, "IORELAY_MAX_CONNECTIONS", 4096, &max_conns));
  cfg.max_connections = max_conns > 0 ? static_cast<int>(max_conns) : 1;
  int64_t spin = cfg.spin_us;
  IORELAY_RETURN_IF_ERROR(ParseUint(getenv, "IORELAY_SPIN_US", 10'000, &spin));
  cfg.spin_us = static_cast<int>(spin);

  const char* fallback = getenv("IORELAY_FALLBACK");
  std::string fb = fallback ? fallback : "";
  if (fb.empty() || fb == "eio") {
    cfg.fallback = Fallback::kEio;
  } else if (fb == "direct") {
    cfg.fallback = Fallback::kDirect;
  } else {
    return Status::InvalidArgument("IORELAY_FALLBACK must be eio or direct, not '" + fb + "'");
  }
  IORELAY_RETURN_IF_ERROR(ParseOnOff(getenv, "IORELAY_FAILOVER", &cfg.failover));
  IORELAY_RETURN_IF_ERROR(ParseOnOff(getenv, "IORELAY_SEAL", &cfg.seal));
  if (const char* roots = getenv("IORELAY_DIRECT_ROOT")) {
    for (const std::string& pair : Split(roots, ':')) {
      size_t eq = pair.find('=');
      if (eq == std::string::npos || pair[0] != '/' || eq + 1 >= pair.size() ||
          pair[eq + 1] != '/') {
        return Status::InvalidArgument("IORELAY_DIRECT_ROOT entries are /PREFIX=/ROOT, not '" +
                                       pair + "'");
      }
      cfg.direct_roots.emplace_back(TrimSlashes(pair.substr(0, eq)),
                                    TrimSlashes(pair.substr(eq + 1)));
    }
  }
  return cfg;
}

}  // namespace iorelay::client
