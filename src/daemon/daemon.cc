// Daemon assembly and lifecycle: validation, listeners, the event loops (io_loop.h), and the
// ordered shutdown with its deadline.
#include "daemon/daemon.h"

#include <fmt/core.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include "daemon/admission.h"
#include "daemon/job_lifecycle.h"
#include "iorelay/version.h"
#include "sched/registry.h"

namespace iorelay::daemon {

Result<std::unique_ptr<sched::Scheduler>> MakeScheduler(const Config& config) {
  sched::SchedulerRegistry registry;
  sched::RegisterBuiltinSchedulers(&registry);
  Result<std::unique_ptr<sched::Scheduler>> s = registry.CreateFromSpec(config.scheduler);
  if (!s.ok()) {
    return Status::FromErrno(s.status().code(), "--scheduler: " + s.status().message());
  }
  // Application index = position of the credential (as sessions number them). A weight
  // other than 1 overrides the spec's weight.<app>; 1 leaves the spec's value in place.
  for (size_t i = 0; i < config.credentials.size(); ++i) {
    uint32_t w = config.credentials[i].weight;
    if (w != 1) (*s)->SetAppWeight(static_cast<uint32_t>(i), w);
  }
  return s;
}

Result<nlohmann::json> EffectiveConfigJson(const Config& config) {
  Result<std::unique_ptr<sched::Scheduler>> s = MakeScheduler(config);
  if (!s.ok()) return s.status();
  nlohmann::json j = ConfigToJson(config);
  j["scheduler"] = (*s)->EffectiveConfig();
  return j;
}

nlohmann::json StatsJson(Core& core) {
  nlohmann::json j = core.stats->ToJson();
  j["scheduler"] = core.dispatcher->SchedulerConfig();
  // What the scheduler keeps per application (a weight, a queue): a departed job's goes.
  j["scheduler_apps"] = core.dispatcher->AppsHeld();
  j["scheduler_apps_removed"] = core.dispatcher->apps_removed();
  j["backend"] = core.config.role == Role::kRelay ? "relay" : core.config.backend;
  j["role"] = core.config.role == Role::kRelay ? "relay" : "daemon";
  // The calls this daemon made to its backend: with "total.requests" (in), what went out.
  nlohmann::json calls = nlohmann::json::object();
  uint64_t calls_total = 0;
  if (core.backend_counts != nullptr) {
    for (const auto& [name, n] : core.backend_counts->Counts()) {
      calls[name] = n;
      calls_total += n;
    }
  }
  j["backend_calls"] = calls;
  j["backend_calls_total"] = calls_total;
  j["pipes_idle"] = core.pipes.idle();
  if (core.relay_stats) j["relay"] = core.relay_stats();
  if (core.lock_forwarder != nullptr) j["relay_locks"] = core.lock_forwarder->StatsJson();
  j["daemon_version"] = IORELAY_VERSION;
  j["protocol_version"] = proto::kVersion;
  return j;
}

nlohmann::json StatsJsonFor(Core& core, const Session& session) {
  const Job& job = session.job();
  if (job.admin() || job.spec().at_start) return StatsJson(core);
  // A job is hostile to the others: nothing of theirs, not even the daemon-wide counters that
  // add up their activity (files, ops, connections, backend calls, the scheduler's weights).
  nlohmann::json j = core.stats->ToJsonOf(job.app());
  j["scope"] = "job";
  j["job"] = job.name();
  j["backend"] = core.config.backend;
  j["role"] = "daemon";
  j["daemon_version"] = IORELAY_VERSION;
  j["protocol_version"] = proto::kVersion;
  return j;
}

Result<std::unique_ptr<Core>> BuildCore(const Config& config,
                                        std::unique_ptr<backend::Backend> backend_given) {
  auto core = std::make_unique<Core>();
  core->config = config;
  IORELAY_RETURN_IF_ERROR(FitConnectionsToNofile(&core->config));
  if (config.credentials.empty() && config.admin_credential.empty()) {
    return Status::InvalidArgument(
        "no --credential nor --admin-credential given: the daemon would serve nobody");
  }
  const bool relay = config.role == Role::kRelay;
  if (relay != (backend_given != nullptr)) {
    return Status::InvalidArgument(relay ? "the relay role needs the relay backend (iorelayd)"
                                         : "a backend is given only to a relay");
  }
  if (relay && !config.admin_credential.empty()) {
    return Status::InvalidArgument("--admin-credential: a relay serves its one job only");
  }
  for (size_t i = 0; i < config.exports.size(); ++i) {
    const auto& [prefix, root] = config.exports[i];
    // A relay's export roots are upstream paths, which its backend resolves by index.
    Status s = relay ? core->start_exports->AddVirtual(prefix, static_cast<int>(i))
                     : core->start_exports->Add(prefix, root);
    if (!s.ok())
      return Status::FromErrno(s.code(), "--export " + prefix + "=" + root + ": " + s.message());
  }
  core->stats = std::make_unique<Stats>();
  core->default_shares = DefaultShares(core->config);
  IORELAY_RETURN_IF_ERROR(AdmitStartJobs(*core));
  if (!relay && !config.upstream.empty()) {
    return Status::InvalidArgument("--upstream is for --role relay");
  }
  if (relay) {
    core->backend = std::move(backend_given);
  } else {
    Result<std::unique_ptr<backend::Backend>> backend =
        backend::MakeBackend(config.backend, config.delay_us);
    if (!backend.ok()) return backend.status();
    core->backend = std::move(*backend);
  }
  auto counting = std::make_unique<backend::CountingBackend>(std::move(core->backend));
  core->backend_counts = counting.get();
  core->backend = std::move(counting);
  Result<std::unique_ptr<sched::Scheduler>> scheduler = MakeScheduler(config);
  if (!scheduler.ok()) return scheduler.status();
  if (!config.trace.empty()) IORELAY_RETURN_IF_ERROR(core->trace.Open(config.trace));
  core->handlers = std::make_unique<TaskPool>(config.workers);
  if (config.shm_pipes) {
    // Without io_uring (disabled by the kernel or a container's filter), the threads that move a
    // client's piped bytes do it themselves, and a client can hold them (docs/daemon.md).
    Result<std::unique_ptr<PipeMover>> probe = PipeMover::Create();
    core->async_pipe_moves = probe.ok();
    if (!probe.ok()) {
      fmt::print(stderr, "iorelayd: {}; piped data is moved by the daemon's own threads\n",
                 probe.status().ToString());
    }
  }
  core->metadata_inline = std::make_unique<MetadataInline>(config.inline_max_us * 1000);
  Core* c = core.get();
  core->dispatcher = std::make_unique<Dispatcher>(
      std::move(*scheduler), &core->clock, config.workers, config.inline_max_us * 1000,
      config.worker_spin_us * 1000,
      [c](const sched::Dispatch& d, Work* const* works, size_t n, int* results) {
        ExecuteDispatch(*c, d, works, n, results);
      },
      config.worker_spin_adaptive ? WorkerSpinRule::Mode::kAdaptive
                                  : WorkerSpinRule::Mode::kAlways);
  return core;
}

Result<std::unique_ptr<Daemon>> Daemon::Start(std::unique_ptr<Core> core) {
  std::unique_ptr<Daemon> d(new Daemon(std::move(core)));
  if (d->core_->backend->HandlesAreDescriptors()) {
    d->core_->fds.SetLimit();
    // A job admitted at run time may hold half of the descriptors for clients' files.
    d->core_->default_shares.max_open_files = d->core_->fds.file_limit() / 2;
  }
  for (const std::string& spec : d->core_->config.listen) {
    Result<std::unique_ptr<Listener>> l = Listen(spec);
    if (!l.ok()) return l.status();
    d->addresses_.push_back((*l)->address());
    d->listeners_.push_back(std::move(*l));
  }
  // A fixed number of event loops, whatever the number of connections; loop 0 accepts.
  const int n = std::max(1, d->core_->config.io_threads);
  for (int i = 0; i < n; ++i) {
    d->loops_.push_back(std::make_unique<IoLoop>(*d->core_, &d->loop_ptrs_));
    d->loop_ptrs_.push_back(d->loops_.back().get());
    IORELAY_RETURN_IF_ERROR(d->loops_.back()->Init());
  }
  for (auto& l : d->listeners_) d->loops_[0]->AddListener(l.get());
  for (auto& loop : d->loops_) loop->Start();
  d->heartbeat_ = std::thread([self = d.get()] { self->HeartbeatLoop(); });
  if (!d->core_->config.ready_file.empty()) IORELAY_RETURN_IF_ERROR(d->WriteReadyFile());
  return d;
}

Daemon::~Daemon() { Shutdown(); }

Status Daemon::WriteReadyFile() const {
  const std::string& path = core_->config.ready_file;
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const std::string& a : addresses_) out << a << "\n";
    out.flush();
    if (!out) return Status::LastError("ready file " + tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) return Status::LastError("ready file " + path);
  return Status::Ok();
}

void Daemon::HeartbeatLoop() {
  const auto period = std::chrono::milliseconds(core_->config.heartbeat_ms);
  // Leases are looked at every 250 ms at least, so a job's runs out within 250 ms of its end
  // (and its connections close at the event loops' next tick, 50 ms at most).
  const auto wake = std::min(period, std::chrono::milliseconds(250));
  auto next_heartbeat = std::chrono::steady_clock::now() + period;
  std::vector<ConnPtr> conns;
  MutexLock lock(heartbeat_mu_);
  while (!heartbeat_cv_.WaitFor(heartbeat_mu_, wake,
                                [this]() REQUIRES(heartbeat_mu_) { return heartbeat_stop_; })) {
    lock.Unlock();
    RevokeExpiredJobs(*core_);
    if (std::chrono::steady_clock::now() >= next_heartbeat) {
      next_heartbeat = std::chrono::steady_clock::now() + period;
      for (auto& loop : loops_) loop->Outstanding(&conns);
      for (const ConnPtr& c : conns) c->SendHeartbeat();  // never blocks
      conns.clear();
    }
    lock.Lock();
  }
}

void Daemon::Shutdown() {
  std::call_once(shutdown_once_, [this] {
    // A ready file says that the daemon listens: gone once it stops (a script that waits for
    // it must not find a stopped daemon's).
    if (!core_->config.ready_file.empty()) ::unlink(core_->config.ready_file.c_str());
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(core_->config.shutdown_timeout_ms);
    // Stop accepting and reading; what is in flight finishes and its replies go out, up to
    // the deadline. A client that does not read its replies cannot hold this up.
    std::vector<uint64_t> ticks;
    for (auto& loop : loops_) {
      ticks.push_back(loop->ticks());
      loop->BeginDrain();
    }
    core_->dispatcher->DrainUntil(deadline);
    core_->locks.CancelAll(EINTR);
    if (core_->lock_forwarder != nullptr) core_->lock_forwarder->CancelAll(EINTR);
    for (;;) {
      bool quiet = true;
      for (size_t i = 0; i < loops_.size(); ++i) {
        // (busy() is fresh after two ticks past the drain)
        if (loops_[i]->ticks() < ticks[i] + 2 || loops_[i]->busy() > 0) quiet = false;
      }
      if (quiet || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (auto& loop : loops_) loop->Stop();  // closes every connection
    core_->handlers->Stop();
    {
      MutexLock lock(heartbeat_mu_);
      heartbeat_stop_ = true;
    }
    heartbeat_cv_.NotifyAll();
    if (heartbeat_.joinable()) heartbeat_.join();
    core_->dispatcher->Stop();
    for (auto& l : listeners_) l->Shutdown();
    for (const auto& s : core_->sessions.All()) s->Clear();
    core_->trace.Close();
    listeners_.clear();
  });
}

}  // namespace iorelay::daemon
