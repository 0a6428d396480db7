// The client's environment variables, one row each: the row's type checks a value and its
// setter applies it (ParseConfig), and the same rows make `iorelay-ctl env`'s listing and
// docs/interposer.md's table (checked by client_unit_test), so a variable is added in one place.
// Variables read where they are used (by the interposer or the connection) are rows too, read
// with ReadEnv so that their names are spelled only here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "client/config.h"
#include "common/status.h"

namespace iorelay::client {

// The variables' ids and names, in the table's order (which is the order ParseConfig checks
// them in). Names are here so that ReadEnv needs no table: the interposer reads some before its
// client exists.
#define IORELAY_CLIENT_ENV_NAMES(X)             \
  X(kServers, "IORELAY_SERVERS")                \
  X(kSecretFile, "IORELAY_SECRET_FILE")         \
  X(kPrefix, "IORELAY_PREFIX")                  \
  X(kPlacement, "IORELAY_PLACEMENT")            \
  X(kRanksPerNode, "IORELAY_RANKS_PER_NODE")    \
  X(kNodeId, "IORELAY_NODE_ID")                 \
  X(kNodes, "IORELAY_NODES")                    \
  X(kTimeoutMs, "IORELAY_TIMEOUT_MS")           \
  X(kMaxConnections, "IORELAY_MAX_CONNECTIONS") \
  X(kSpinUs, "IORELAY_SPIN_US")                 \
  X(kSpinAdapt, "IORELAY_SPIN_ADAPT")           \
  X(kFallback, "IORELAY_FALLBACK")              \
  X(kDirectRoot, "IORELAY_DIRECT_ROOT")         \
  X(kFailover, "IORELAY_FAILOVER")              \
  X(kMapFile, "IORELAY_MAP_FILE")               \
  X(kSeal, "IORELAY_SEAL")                      \
  X(kWriteBehind, "IORELAY_WRITE_BEHIND")       \
  X(kReadAhead, "IORELAY_READ_AHEAD")           \
  X(kAttrCacheMs, "IORELAY_ATTR_CACHE_MS")      \
  X(kStatPrefetch, "IORELAY_STAT_PREFETCH")     \
  X(kShm, "IORELAY_SHM")                        \
  X(kMmapCopyMax, "IORELAY_MMAP_COPY_MAX")      \
  X(kStageDir, "IORELAY_STAGE_DIR")             \
  X(kCwd, "IORELAY_CWD")                        \
  X(kInheritFds, "IORELAY_INHERIT_FDS")

enum class EnvVarId : uint8_t {
#define IORELAY_ENV_ID(id, name) id,
  IORELAY_CLIENT_ENV_NAMES(IORELAY_ENV_ID)
#undef IORELAY_ENV_ID
};

inline constexpr const char* kEnvNames[] = {
#define IORELAY_ENV_NAME(id, name) name,
    IORELAY_CLIENT_ENV_NAMES(IORELAY_ENV_NAME)
#undef IORELAY_ENV_NAME
};

constexpr const char* EnvName(EnvVarId id) { return kEnvNames[static_cast<size_t>(id)]; }

// The process's value of the variable (getenv), null when unset. Allocates nothing.
inline const char* ReadEnv(EnvVarId id) { return std::getenv(EnvName(id)); }

// What the rows fill in; ParseConfig then derives the node id and node count from the launcher
// when they were not given.
struct ParsedEnv {
  ClientConfig cfg;
  int64_t ranks_per_node = 1;
  std::optional<uint32_t> node_id;
  std::optional<uint32_t> nodes;
};

struct EnvVar {
  EnvVarId id;
  std::string name;           // EnvName(id)
  std::string values;         // what it takes, as listed (made from the type for numbers, choices)
  std::string default_value;  // as listed; empty for a required variable
  std::string meaning;        // one line
  // `iorelay run` hands it to every rank through the run file (python/iorelay/run_file.py's
  // RUN_FILE_KEYS, checked against this by python/tests/test_env_table.py).
  bool run_file = false;
  // Checks a set, non-empty value and applies it; an error names the variable. Null for a
  // variable read where it is used (`read_by` says where).
  std::function<Status(const std::string& text, ParsedEnv* env)> apply;
  std::string read_by;  // for those: the file that reads it
};

// Every row, in EnvVarId order.
const std::vector<EnvVar>& EnvTable();
const EnvVar& Env(EnvVarId id);

// `iorelay-ctl env`: each variable with its values, default and meaning.
std::string EnvListing();
// docs/interposer.md's table, a line per variable.
std::string EnvMarkdown();

}  // namespace iorelay::client
