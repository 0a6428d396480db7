// Daemon assembly and lifecycle: validation, listeners, accept threads, per-connection
// threads, the heartbeat thread, and the ordered shutdown.
#include "daemon/daemon.h"

#include <fmt/core.h>
#include <stdio.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <system_error>
#include <thread>

#include "daemon/serve_connection.h"
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
  j["backend"] = core.config.backend;
  j["daemon_version"] = IORELAY_VERSION;
  j["protocol_version"] = proto::kVersion;
  return j;
}

Result<std::unique_ptr<Core>> BuildCore(const Config& config) {
  auto core = std::make_unique<Core>();
  core->config = config;
  if (config.credentials.empty()) {
    return Status::InvalidArgument("no --credential given: the daemon would serve nobody");
  }
  std::vector<std::string> names;
  for (const auto& [name, file, weight] : config.credentials) {
    for (const std::string& n : names) {
      if (n == name) return Status::InvalidArgument("credential name '" + name + "' given twice");
    }
    Result<Secret> secret = LoadSecretFile(file);
    if (!secret.ok()) {
      return Status::FromErrno(secret.status().code(), "--credential " + name + "=" + file + ": " +
                                                           secret.status().message());
    }
    core->credentials.push_back(Credential{name, *secret});
    names.push_back(name);
  }
  for (const auto& [prefix, root] : config.exports) {
    Status s = core->exports.Add(prefix, root);
    if (!s.ok())
      return Status::FromErrno(s.code(), "--export " + prefix + "=" + root + ": " + s.message());
  }
  Result<std::unique_ptr<backend::Backend>> backend =
      backend::MakeBackend(config.backend, config.delay_us);
  if (!backend.ok()) return backend.status();
  core->backend = std::move(*backend);
  Result<std::unique_ptr<sched::Scheduler>> scheduler = MakeScheduler(config);
  if (!scheduler.ok()) return scheduler.status();
  if (!config.trace.empty()) IORELAY_RETURN_IF_ERROR(core->trace.Open(config.trace));
  core->stats = std::make_unique<Stats>(names);
  Core* c = core.get();
  core->dispatcher = std::make_unique<Dispatcher>(
      std::move(*scheduler), &core->clock, config.workers,
      [c](const sched::Dispatch& d, Work* const* works, size_t n, int* results) {
        ExecuteDispatch(*c, d, works, n, results);
      });
  return core;
}

Result<std::unique_ptr<Daemon>> Daemon::Start(std::unique_ptr<Core> core) {
  std::unique_ptr<Daemon> d(new Daemon(std::move(core)));
  for (const std::string& spec : d->core_->config.listen) {
    Result<std::unique_ptr<Listener>> l = Listen(spec);
    if (!l.ok()) return l.status();
    d->addresses_.push_back((*l)->address());
    d->listeners_.push_back(std::move(*l));
  }
  for (auto& l : d->listeners_) {
    Listener* raw = l.get();
    Daemon* self = d.get();
    d->acceptors_.emplace_back([self, raw] { self->AcceptLoop(raw); });
  }
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

namespace {
// Accept errors that pass when resources come back (descriptors, memory): the loop waits and
// tries again instead of never accepting again.
bool IsTransientAcceptError(int err) {
  return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM || err == EPERM ||
         err == EAGAIN;
}
constexpr auto kAcceptBackoffMin = std::chrono::milliseconds(10);
constexpr auto kAcceptBackoffMax = std::chrono::seconds(1);
}  // namespace

void Daemon::AcceptLoop(Listener* listener) {
  std::chrono::milliseconds backoff = kAcceptBackoffMin;
  for (;;) {
    Result<std::unique_ptr<Connection>> c = listener->Accept();
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_) return;  // (a connection accepted during shutdown is dropped)
    // Finished connections give their descriptors back before anything else is decided.
    Reap(false);
    if (!c.ok()) {
      fmt::print(stderr, "iorelayd: accept on {}: {}\n", listener->address(),
                 c.status().ToString());
      if (!IsTransientAcceptError(c.status().code())) return;
      // Woken early by shutdown (cv_ is notified with stopping_ set).
      cv_.wait_for(lock, backoff, [this] { return stopping_; });
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, kAcceptBackoffMax);
      continue;
    }
    backoff = kAcceptBackoffMin;
    auto conn = std::make_shared<ClientConn>(std::move(*c));
    auto done = std::make_shared<std::atomic<bool>>(false);
    Core* core = core_.get();
    std::thread serve;
    try {
      serve = std::thread([core, conn, done] {
        ServeConnection(*core, conn);
        done->store(true);
      });
    } catch (const std::system_error& e) {
      // No thread for it (EAGAIN at the process's thread limit): refuse this connection only.
      fmt::print(stderr, "iorelayd: refusing a connection on {}: no thread: {}\n",
                 listener->address(), e.what());
      conn->Shutdown();
      continue;
    }
    conns_.push_back(ConnEntry{conn, std::move(serve), done});
  }
}

void Daemon::Reap(bool all) {
  for (auto it = conns_.begin(); it != conns_.end();) {
    if (all || it->done->load()) {
      if (it->thread.joinable()) it->thread.join();
      it = conns_.erase(it);
    } else {
      ++it;
    }
  }
}

void Daemon::HeartbeatLoop() {
  auto period = std::chrono::milliseconds(core_->config.heartbeat_ms);
  std::unique_lock<std::mutex> lock(mu_);
  while (!heartbeat_stop_) {
    cv_.wait_for(lock, period);
    if (heartbeat_stop_) break;
    for (const ConnEntry& e : conns_) {
      if (e.conn->outstanding.load(std::memory_order_acquire) > 0) e.conn->SendHeartbeat();
    }
  }
}

void Daemon::Shutdown() {
  std::call_once(shutdown_once_, [this] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();  // an acceptor backing off after EMFILE
    for (auto& l : listeners_) l->Shutdown();
    for (auto& t : acceptors_) t.join();
    // Stop receiving; readers finish what they run inline and leave.
    std::vector<std::thread> readers;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (ConnEntry& e : conns_) e.conn->transport()->StopReceiving();
      for (ConnEntry& e : conns_) readers.push_back(std::move(e.thread));
    }
    for (auto& t : readers) {
      if (t.joinable()) t.join();
    }
    core_->dispatcher->Drain();
    core_->locks.CancelAll(EINTR);
    core_->dispatcher->Stop();
    {
      std::lock_guard<std::mutex> lock(mu_);
      heartbeat_stop_ = true;
    }
    cv_.notify_all();
    if (heartbeat_.joinable()) heartbeat_.join();
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (ConnEntry& e : conns_) e.conn->Shutdown();
      Reap(true);
    }
    for (const auto& s : core_->sessions.All()) s->Clear();
    core_->trace.Close();
    listeners_.clear();
  });
}

}  // namespace iorelay::daemon
