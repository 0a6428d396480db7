// iorelayd: parse the configuration, start the daemon, wait for SIGTERM/SIGINT, shut down.
#include <fmt/core.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "common/version_flag.h"
#include "common/watchdog.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/fd_budget.h"
#include "daemon/stop_signals.h"
#include "relay/relay_core.h"

namespace {

// How long start-up may go on after a stop signal before the process exits without it.
constexpr std::chrono::milliseconds kStartupStopGrace{500};

// How long past --shutdown-timeout-ms Shutdown may take before the process exits anyway.
constexpr std::chrono::milliseconds kShutdownGrace{1000};

// Shutdown joins the worker and handler threads; a backend call that never returns (a hung
// network file system, a stopped FUSE server) would hold the process forever. Past the
// deadline and a grace period it exits with status 1, naming the cause.
void ExitStuckShutdown(std::chrono::milliseconds limit) {
  fmt::print(stderr,
             "iorelayd: shutdown still waiting after {} ms: a backend call has not returned; "
             "exiting without it\n",
             limit.count());
  std::fflush(stderr);
  ::_exit(1);
}

// A stop signal came while start-up waited in a call that has not returned (a FIFO given as a
// file, a hung file system, an upstream that does not answer). Nothing is served yet: the
// process ends; a socket it may have bound is left stale, for the next daemon to take over.
void ExitStuckStartup(int sig) {
  fmt::print(stderr,
             "iorelayd: signal {} during start-up, which has not finished {} ms later (a call "
             "that does not return); exiting without it\n",
             sig, kStartupStopGrace.count());
  std::fflush(stderr);
  ::_exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace iorelay::daemon;
  if (iorelay::PrintVersionIfAsked(argc, argv, "iorelayd")) return 0;
  iorelay::Result<CommandLine> cl = ParseCommandLine(argc, argv);
  if (!cl.ok()) {
    fmt::print(stderr, "iorelayd: {}\n{}", cl.status().message(), UsageText());
    return 2;
  }
  if (cl->help) {
    fmt::print("{}", UsageText());
    return 0;
  }
  if (cl->print_config) {
    iorelay::Result<nlohmann::json> j = EffectiveConfigJson(cl->config);
    if (!j.ok()) {
      fmt::print(stderr, "iorelayd: {}\n", j.status().ToString());
      return 2;
    }
    fmt::print("{}\n", j->dump(2));
    return 0;
  }
  // Stop signals are taken by a thread of their own from here on (every later thread inherits
  // their mask); one during start-up ends the process even when start-up does not return.
  StopSignals stop_signals(kStartupStopGrace, ExitStuckStartup);
  signal(SIGPIPE, SIG_IGN);

  // Clients' files may use all the descriptors the hard limit allows, but a reserve
  // (fd_budget.h).
  const NofileLimits nofile = RaiseNofileLimit();
  fmt::print(stderr,
             "iorelayd: descriptor limit (RLIMIT_NOFILE) {}{} (hard {}); files opened for "
             "clients leave a reserve of {}\n",
             nofile.after,
             nofile.after != nofile.before ? fmt::format(", raised from {}", nofile.before) : "",
             nofile.hard == RLIM_INFINITY ? std::string("unlimited") : std::to_string(nofile.hard),
             FdBudget::ReserveOf(nofile.after));
  iorelay::Result<std::unique_ptr<iorelay::daemon::Core>> core =
      cl->config.role == Role::kRelay ? iorelay::relay::BuildRelayCore(cl->config)
                                      : BuildCore(cl->config);
  if (!core.ok()) {
    stop_signals.StartupDone();
    fmt::print(stderr, "iorelayd: {}\n", core.status().ToString());
    return 2;
  }
  if (int sig = stop_signals.received(); sig != 0) {
    stop_signals.StartupDone();
    fmt::print(stderr, "iorelayd: signal {} during start-up; stopped before listening\n", sig);
    return 0;
  }
  iorelay::Result<std::unique_ptr<Daemon>> daemon = Daemon::Start(std::move(*core));
  stop_signals.StartupDone();
  if (!daemon.ok()) {
    fmt::print(stderr, "iorelayd: {}\n", daemon.status().ToString());
    return 1;
  }
  for (const std::string& a : (*daemon)->addresses())
    fmt::print(stderr, "iorelayd: listening on {}\n", a);
  const int sig = stop_signals.Wait();
  fmt::print(stderr, "iorelayd: signal {}, shutting down\n", sig);
  {
    const auto limit = std::chrono::milliseconds(cl->config.shutdown_timeout_ms) + kShutdownGrace;
    iorelay::Watchdog watchdog(limit, [limit] { ExitStuckShutdown(limit); });
    (*daemon)->Shutdown();
  }
  fmt::print(stderr, "{}\n", (*daemon)->StatsJson().dump());
  return 0;
}
