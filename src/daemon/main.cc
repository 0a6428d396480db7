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
#include "relay/relay_core.h"

namespace {

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
  // Signals are taken synchronously by this thread; every other thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
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
    fmt::print(stderr, "iorelayd: {}\n", core.status().ToString());
    return 2;
  }
  iorelay::Result<std::unique_ptr<Daemon>> daemon = Daemon::Start(std::move(*core));
  if (!daemon.ok()) {
    fmt::print(stderr, "iorelayd: {}\n", daemon.status().ToString());
    return 1;
  }
  for (const std::string& a : (*daemon)->addresses())
    fmt::print(stderr, "iorelayd: listening on {}\n", a);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  fmt::print(stderr, "iorelayd: signal {}, shutting down\n", sig);
  {
    const auto limit = std::chrono::milliseconds(cl->config.shutdown_timeout_ms) + kShutdownGrace;
    iorelay::Watchdog watchdog(limit, [limit] { ExitStuckShutdown(limit); });
    (*daemon)->Shutdown();
  }
  fmt::print(stderr, "{}\n", (*daemon)->StatsJson().dump());
  return 0;
}
