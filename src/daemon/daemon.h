// iorelayd as a library: a Daemon is built from a Config, listens, serves, and shuts down
// cleanly. main.cc is a thin wrapper; tests embed a Daemon in-process.
#pragma once

#include <memory>
#include <mutex>  // std::once_flag
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "daemon/config.h"
#include "daemon/core.h"
#include "daemon/io_loop.h"
#include "daemon/transport.h"

namespace iorelay::daemon {

// Checks what needs the system: secrets readable (0600), export roots directories, backend
// and scheduler names known, trace file writable. A failure is a configuration error (the
// program exits 2); the message says what to fix. A relay (--role relay) is given its backend
// (src/relay/relay_core.h builds it); a daemon makes its own from --backend.
Result<std::unique_ptr<Core>> BuildCore(const Config& config,
                                        std::unique_ptr<backend::Backend> backend = nullptr);
// The scheduler of `config.scheduler` (a registry spec) with the credentials' weights
// (application index = credential position). EINVAL with the registry's message.
Result<std::unique_ptr<sched::Scheduler>> MakeScheduler(const Config& config);
// ConfigToJson with "scheduler" replaced by the scheduler's effective configuration (every
// parameter, defaults filled in; it reads back as a spec). Fails like MakeScheduler.
Result<nlohmann::json> EffectiveConfigJson(const Config& config);

class Daemon {
 public:
  // Listens on every address, starts the threads, then writes the ready file.
  static Result<std::unique_ptr<Daemon>> Start(std::unique_ptr<Core> core);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // The listening addresses with actual ports, in --listen order.
  const std::vector<std::string>& addresses() const { return addresses_; }
  // Stops accepting and receiving, finishes requests in flight (parked lock waits end with
  // EINTR) and sends their replies for at most --shutdown-timeout-ms, then closes every
  // connection and file. Idempotent; called by the destructor.
  void Shutdown();
  nlohmann::json StatsJson() const { return daemon::StatsJson(*core_); }
  Core& core() { return *core_; }

 private:
  explicit Daemon(std::unique_ptr<Core> core) : core_(std::move(core)) {}
  Status WriteReadyFile() const;
  // Every --heartbeat-ms, a heartbeat to each connection with requests outstanding: its own
  // thread, so a loop busy with a backend call run inline does not delay them.
  void HeartbeatLoop();

  std::unique_ptr<Core> core_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::vector<std::string> addresses_;
  std::vector<std::unique_ptr<IoLoop>> loops_;
  std::vector<IoLoop*> loop_ptrs_;
  std::thread heartbeat_;
  Mutex heartbeat_mu_;  // only for the heartbeat thread's wait; never held while sending
  CondVar heartbeat_cv_;
  bool heartbeat_stop_ GUARDED_BY(heartbeat_mu_) = false;
  std::once_flag shutdown_once_;
};

}  // namespace iorelay::daemon
