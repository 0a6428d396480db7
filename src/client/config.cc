// Environment parsing: the rows of env_table.h check and apply each variable; then the node
// identity comes from the launcher where it was not given.
#include "client/config.h"

#include <cerrno>
#include <cstdlib>
#include <initializer_list>

#include "client/env_table.h"

namespace iorelay::client {
namespace {

// A non-negative integer variable of the launcher's; `*out` unchanged when unset.
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
  ParsedEnv env;
  for (const EnvVar& var : EnvTable()) {
    if (!var.apply) continue;  // read where it is used
    const char* text = getenv(var.name.c_str());
    if (text == nullptr || *text == '\0') {
      if (var.default_value.empty()) return Status::InvalidArgument(var.name + " is not set");
      continue;
    }
    IORELAY_RETURN_IF_ERROR(var.apply(text, &env));
  }
  int64_t node = env.node_id.value_or(0), nodes = env.nodes.value_or(0);
  if (!env.node_id) {
    if (const char* rank = FirstSet(getenv, {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"})) {
      IORELAY_RETURN_IF_ERROR(ParseUint(getenv, rank, UINT32_MAX, &node));
      node /= env.ranks_per_node;
    }
  }
  if (!env.nodes) {
    if (const char* size = FirstSet(getenv, {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})) {
      IORELAY_RETURN_IF_ERROR(ParseUint(getenv, size, UINT32_MAX, &nodes));
      nodes = (nodes + env.ranks_per_node - 1) / env.ranks_per_node;
    }
  }
  env.cfg.node_id = static_cast<uint32_t>(node);
  env.cfg.nodes = static_cast<uint32_t>(nodes > 0 ? nodes : node + 1);
  return env.cfg;
}

}  // namespace iorelay::client
