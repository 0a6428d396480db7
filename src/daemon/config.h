// iorelayd's configuration: command-line and JSON forms of the same keys, with defaults,
// printable in full (--print-config) so every result can record it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace iorelay::daemon {

// One --credential NAME=FILE[:weight=N]: an application identity, its secret and its QoS
// weight (the scheduler's SetAppWeight; schedulers without weights ignore it).
struct CredentialConfig {
  std::string name;
  std::string file;
  uint32_t weight = 1;
};

// What the daemon is: an I/O-node daemon serving files through its backend, or a node-local
// relay whose backend is an iorelay client of the --upstream daemons (docs/daemon.md, "Relay
// role"): the ranks of one compute node forward through it so its scheduler merges their
// requests before they cross the network.
enum class Role { kDaemon, kRelay };

struct Config {
  Role role = Role::kDaemon;
  // Relay role: the I/O-node daemons (tcp:HOST:PORT, unix:PATH) its backend forwards to.
  std::vector<std::string> upstream;
  std::vector<std::string> listen;  // tcp:HOST:PORT, unix:PATH
  // Client prefix, root: a directory here, or for a relay the path under an upstream export.
  std::vector<std::pair<std::string, std::string>> exports;
  std::vector<CredentialConfig> credentials;
  // The admin channel's credential (docs/security.md): connections authenticated with it may
  // admit, renew, release, revoke and list jobs, and nothing else. Empty: no admin channel.
  std::string admin_credential;
  std::string ready_file;
  int workers = 4;
  // An event loop runs a dispatch itself only while recent dispatches took at most this long
  // (daemon/dispatcher.h); 0: never, every dispatch goes to a worker.
  int64_t inline_max_us = 50;
  // An idle worker spins this long for work before it sleeps (daemon/dispatcher.h); 0: never.
  int64_t worker_spin_us = 50;
  // --worker-spin: adaptive (true: WorkerSpinRule::Mode::kAdaptive) or always.
  bool worker_spin_adaptive = true;
  std::string scheduler = "fifo";  // a registry spec: "aioli:quantum=64KiB" or JSON
  std::string backend = "posix";   // posix, null, emulated:PROFILE
  int64_t delay_us = 0;
  int heartbeat_ms = 200;
  // A connection that has not authenticated within this time after accept is closed.
  int handshake_timeout_ms = 10'000;
  // Connection limits (docs/daemon.md, Limits).
  int io_threads = 2;  // event-loop threads, whatever the connections
  // Refused beyond; 0: a quarter of RLIMIT_NOFILE (each connection may hold up to 4
  // descriptors), which is also the most allowed (BuildCore refuses more).
  int max_connections = 0;
  int max_handshakes = 64;  // not yet authenticated: refused beyond
  // At max_handshakes, the oldest connection in its handshake for this long gives its place to
  // the next one waiting (0: none does; the next waits for a handshake to end).
  int handshake_evict_ms = 50;
  uint64_t min_send_rate = 1 << 20;            // bytes/s a connection with replies queued ...
  int send_window_ms = 5'000;                  // ... must take over this window, or is closed
  uint64_t max_inflight_bytes = 256ull << 20;  // not read while holding more
  // The largest read or write one request may ask for (EINVAL beyond); clients learn it at the
  // handshake and split larger calls. At most proto::kMaxIoBytes.
  uint64_t max_io_bytes = 64ull << 20;
  // An application's connections are not read while its data requests admitted and not yet
  // answered, over all of them, exceed this (one application cannot fill the daemon alone).
  uint64_t max_app_inflight_bytes = 1ull << 30;
  int shutdown_timeout_ms = 3'000;  // SIGTERM: drain at most this long, then close
  // An admin's release waits at most this long for the job's connections to drain, then
  // revokes it instead (daemon/job_lifecycle.h).
  int release_timeout_ms = 30'000;
  // A release serves the job's files whose offset the daemon keeps (O_APPEND, shared after
  // fork) until they close, within release_timeout_ms: a pool's planned move, whose clients
  // cannot move those files elsewhere. Off: such files get EIO once the release starts.
  bool release_keeps_offset_files = false;
  std::string trace;  // empty: no trace
  // Open files one session (client process) may hold; more opens get EMFILE.
  int max_open_files = 65'536;
  // Let clients set set-user-ID/set-group-ID bits (daemon/mode_policy.h).
  bool allow_setid = false;
  // TCP connections carry a tag on every frame after the handshake (docs/security.md); off
  // only to measure what the tags cost.
  bool seal = true;
  bool seal_tag_auto = true;  // --seal-tag auto: AES-GMAC where both ends run it; else Poly1305
  // Shared-memory transport for clients on this host and network namespace (docs/daemon.md).
  bool shm = true;
  bool shm_in_place = true;              // lend request data, read into replies (docs/daemon.md)
  uint64_t shm_ring_bytes = 4ull << 20;  // each direction, per connection
  bool shm_pipes = true;  // large requests' data through pipes, spliced (docs/daemon.md)
  int shm_poll_us = 20;   // a shared-memory connection is polled this long after a request
};

// What the command line asked for besides the configuration.
struct CommandLine {
  Config config;
  bool print_config = false;
  bool help = false;
};

// Parses argv with iorelayd's option table (config.cc; rules in common/option_table.h:
// --config FILE first, then the command line over it). Without any --listen, the default is
// tcp:127.0.0.1:0. Errors are EINVAL with a message naming the offending option.
Result<CommandLine> ParseCommandLine(int argc, const char* const* argv);

// The configuration as JSON with every key present (the keys of the command line).
nlohmann::json ConfigToJson(const Config& config);
// The inverse; unknown keys and wrong types are EINVAL. Missing keys keep defaults.
Result<Config> ConfigFromJson(const nlohmann::json& j);

// --help, generated from the option table.
std::string UsageText();

}  // namespace iorelay::daemon
