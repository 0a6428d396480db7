// iorelayd's option table: every option once, with its parser, --help entry and JSON key. Only
// syntax is checked here; daemon.cc checks what needs the system (readable secrets, directories).
#include "daemon/config.h"

#include "common/option_table.h"
#include "common/shm_ring.h"
#include "common/units.h"
#include "proto/wire.h"

namespace iorelay::daemon {
namespace {

// "FILE" or "FILE:weight=N" (N in [1, 1000000]).
Result<CredentialConfig> ParseCredential(const std::string& name, const std::string& value) {
  CredentialConfig c{name, value, 1};
  size_t at = value.rfind(":weight=");
  if (at != std::string::npos) {
    const std::string w = value.substr(at + 8);
    char* end = nullptr;
    long n = std::strtol(w.c_str(), &end, 10);
    if (w.empty() || *end != '\0' || n < 1 || n > 1'000'000) {
      return Status::InvalidArgument(name + " weight wants an integer in [1, 1000000], got '" + w +
                                     "'");
    }
    c.file = value.substr(0, at);
    c.weight = static_cast<uint32_t>(n);
  }
  if (c.file.empty()) return Status::InvalidArgument(name + " has no file");
  return c;
}

Status CheckListen(const std::string& spec) {
  if (spec.rfind("unix:", 0) == 0) return Status::Ok();
  if (spec.rfind("tcp:", 0) == 0) {
    // A port of 0 to 65535 in decimal (0: any free one). getaddrinfo would take 99999 modulo
    // 65536 and listen where nobody asked.
    const size_t colon = spec.rfind(':');
    const std::string port = spec.substr(colon + 1);
    const bool digits = colon > 3 && !port.empty() && port.size() <= 5 &&
                        port.find_first_not_of("0123456789") == std::string::npos;
    if (digits && std::stol(port) <= 65535) return Status::Ok();
    return Status::InvalidArgument("wants a port of 0 to 65535 in tcp:HOST:PORT, got '" + spec +
                                   "'");
  }
  return Status::InvalidArgument("wants tcp:HOST:PORT or unix:PATH, got '" + spec + "'");
}

cli::Option Exports(Config* c) {
  cli::Option o{"export",         "PREFIX=ROOT", "client paths under PREFIX map beneath ROOT",
                cli::Arity::kMap, nullptr,       nullptr,
                nullptr};
  o.set = [c](const std::string& v) {
    Result<std::pair<std::string, std::string>> p = cli::SplitKeyValue(v);
    if (!p.ok()) return p.status();
    c->exports.push_back(*p);
    return Status::Ok();
  };
  o.get = [c] {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [prefix, root] : c->exports) j[prefix] = root;
    return j;
  };
  o.clear = [c] { c->exports.clear(); };
  return o;
}

cli::Option Credentials(Config* c) {
  cli::Option o{"credential",
                "NAME=FILE[:weight=N]",
                "a job's secret; NAME is the application; N (default 1) is its QoS share\n"
                "for wfq and aioli (N > 1 overrides the scheduler's weight.<app index>)",
                cli::Arity::kMap,
                nullptr,
                nullptr,
                nullptr};
  o.set = [c](const std::string& v) {
    Result<std::pair<std::string, std::string>> p = cli::SplitKeyValue(v);
    if (!p.ok()) return p.status();
    Result<CredentialConfig> cr = ParseCredential(p->first, p->second);
    if (!cr.ok()) return cr.status();
    c->credentials.push_back(*cr);
    return Status::Ok();
  };
  o.get = [c] {
    nlohmann::json j = nlohmann::json::object();
    for (const CredentialConfig& cr : c->credentials) {
      j[cr.name] = cr.weight == 1 ? cr.file : cr.file + ":weight=" + std::to_string(cr.weight);
    }
    return j;
  };
  o.clear = [c] { c->credentials.clear(); };
  return o;
}

// A rate ("1MiB/s", "200Mbps"); a plain number of bytes is per second (as the JSON holds it).
cli::Option Rate(std::string name, uint64_t* field, std::string help) {
  cli::Option o = cli::Bytes(std::move(name), "RATE", field, std::move(help));
  o.set = [field](const std::string& v) {
    Result<double> r = units::ParseBytesPerSecond(v);
    if (!r.ok()) {
      Result<uint64_t> n = units::ParseBytes(v);
      if (!n.ok()) return r.status();
      r = static_cast<double>(*n);
    }
    *field = static_cast<uint64_t>(*r);
    return Status::Ok();
  };
  return o;
}

// A size that must also pass `ok`; otherwise the error says what the option `wants`.
cli::Option CheckedBytes(const std::string& name, uint64_t* field, std::string help,
                         bool (*ok)(uint64_t), const std::string& wants) {
  cli::Option o = cli::Bytes(name, "SIZE", field, std::move(help));
  auto parse = o.set;
  o.set = [=](const std::string& v) {
    IORELAY_RETURN_IF_ERROR(parse(v));
    if (!ok(*field)) {
      return Status::InvalidArgument(name + " wants " + wants + ", got '" + v + "'");
    }
    return Status::Ok();
  };
  return o;
}

cli::Option MaxIoBytes(Config* c) {
  return CheckedBytes(
      "max-io-bytes", &c->max_io_bytes,
      "the largest read or write of one request; clients split\n"
      "larger calls: a multiple of 4KiB in [4KiB, 64MiB] (64MiB)",
      // (A multiple of 4 KiB, so that the pieces of an aligned O_DIRECT call stay aligned.)
      [](uint64_t n) { return n >= 4096 && n <= proto::kMaxIoBytes && n % 4096 == 0; },
      "a multiple of 4KiB in [4KiB, 64MiB]");
}

cli::Option ShmRingBytes(Config* c) {
  return CheckedBytes(
      "shm-ring-bytes", &c->shm_ring_bytes,
      "each shared-memory ring (one per direction and connection):\n"
      "a power of two in [64KiB, 64MiB] (4MiB)",
      [](uint64_t n) {
        return n >= kShmMinRingBytes && n <= kShmMaxRingBytes && (n & (n - 1)) == 0;
      },
      "a power of two in [64KiB, 64MiB]");
}

// The table binds to `c`: parsing writes into it, ToJson reads it.
cli::OptionTable Table(Config* c) {
  cli::OptionTable t("usage: iorelayd [options]\n");
  t.Add(cli::Choice<Role>("role", &c->role, {{"daemon", Role::kDaemon}, {"relay", Role::kRelay}},
                          "daemon: serve files through --backend (daemon); relay: forward\n"
                          "to the --upstream daemons as their client, merging this node's\n"
                          "requests first (--export PREFIX=UPSTREAM_PATH)"))
      .Add(cli::TextList("upstream", "tcp:HOST:PORT|unix:PATH", &c->upstream, CheckListen,
                         "relay role: an I/O-node daemon to forward to"))
      .Add(cli::TextList("listen", "tcp:HOST:PORT|unix:PATH", &c->listen, CheckListen,
                         "where to listen (default tcp:127.0.0.1:0)"))
      .Add(Exports(c))
      .Add(Credentials(c))
      .Add(cli::Text("admin-credential", "FILE", &c->admin_credential,
                     "the admin channel's secret (mode 0600): its connections admit,\n"
                     "renew, release, revoke and list jobs (docs/security.md)"))
      .Add(cli::Text("ready-file", "FILE", &c->ready_file,
                     "write the listening addresses there once ready"))
      .Add(cli::Integer("workers", "N", &c->workers, 1, 1024, "worker threads (4)"))
      .Add(cli::Integer("inline-max-us", "N", &c->inline_max_us, 0, 1'000'000,
                        "an event loop runs a dispatch itself only while recent\n"
                        "dispatches took at most N us (per 64 KiB moved, and 4N in\n"
                        "all), and a quick metadata request while recent ones took\n"
                        "at most N us; 0: never (50)"))
      .Add(cli::Integer("worker-spin-us", "N", &c->worker_spin_us, 0, 1'000'000,
                        "an idle worker looks for work for N us before it sleeps\n"
                        "(one worker at a time, yielding the CPU); 0: never (50)"))
      .Add(cli::Choice("worker-spin", &c->worker_spin_adaptive,
                       {{"adaptive", true}, {"always", false}},
                       "adaptive: an idle worker spins only while the workers'\n"
                       "recent idle gaps averaged below --worker-spin-us and the\n"
                       "machine's runnable threads do not outnumber its CPUs;\n"
                       "always: every time (adaptive)"))
      .Add(cli::Text("scheduler", "SPEC", &c->scheduler,
                     "request scheduler: NAME[:key=value,...] or JSON, e.g.\n"
                     "aioli:quantum=64KiB (fifo; see docs/schedulers.md)"))
      .Add(cli::Text("backend", "posix|null|emulated:PROFILE", &c->backend,
                     "(posix); emulated delays every data call by a disk\n"
                     "model: emulated:hdd, emulated:ssd, emulated:seek=8ms,bw=100MBps"))
      .Add(cli::Integer("delay-us", "N", &c->delay_us, 0, 60'000'000,
                        "sleep N us before every backend call (tests; 0)"))
      .Add(cli::Integer("heartbeat-ms", "N", &c->heartbeat_ms, 1, 3'600'000,
                        "heartbeat period while requests are outstanding (200)"))
      .Add(cli::Integer("handshake-timeout-ms", "N", &c->handshake_timeout_ms, 1, 3'600'000,
                        "close a connection not authenticated N ms after accept (10000)"))
      .Add(cli::Integer("io-threads", "N", &c->io_threads, 1, 64,
                        "event-loop threads serving all connections (2)"))
      .Add(cli::Integer("max-connections", "N", &c->max_connections, 0, 1'000'000,
                        "refuse connections beyond N open ones; at most RLIMIT_NOFILE/4\n"
                        "(a connection holds up to 4 descriptors) (0: that bound)"))
      .Add(cli::Integer("max-handshakes", "N", &c->max_handshakes, 1, 1'000'000,
                        "stop accepting while N connections are not yet\nauthenticated (64)"))
      .Add(cli::Integer("handshake-evict-ms", "N", &c->handshake_evict_ms, 0, 3'600'000,
                        "at --max-handshakes, close the oldest connection in its\n"
                        "handshake for N ms to accept the next (50; 0: never)"))
      .Add(Rate("min-send-rate", &c->min_send_rate,
                "what a connection with replies queued must take, averaged over\n"
                "--send-window-ms, or be closed as a slow reader; and what one\n"
                "inside a frame must send, or be closed as a slow sender (1MiB/s)"))
      .Add(cli::Integer("send-window-ms", "N", &c->send_window_ms, 1, 3'600'000,
                        "the slow-reader window (5000)"))
      .Add(cli::Bytes("max-inflight-bytes", "SIZE", &c->max_inflight_bytes,
                      "stop reading a connection holding more request and reply bytes (256MiB)"))
      .Add(MaxIoBytes(c))
      .Add(cli::Bytes("max-app-inflight-bytes", "SIZE", &c->max_app_inflight_bytes,
                      "stop reading an application's connections while its requests\n"
                      "in flight, over all of them, hold more bytes (1GiB)"))
      .Add(cli::Integer("shutdown-timeout-ms", "N", &c->shutdown_timeout_ms, 1, 3'600'000,
                        "SIGTERM: finish and send replies for at most N ms (3000)"))
      .Add(cli::Integer("release-timeout-ms", "N", &c->release_timeout_ms, 1, 3'600'000,
                        "an admin's release of a job waits at most N ms for its\n"
                        "requests to drain, then revokes it instead (30000)"))
      .Add(cli::Flag("release-keeps-offset-files", &c->release_keeps_offset_files,
                     "a release serves the job's files whose offset the daemon keeps\n"
                     "(O_APPEND, shared after fork) until they close (a pool's moves)"))
      .Add(cli::Text("trace", "FILE", &c->trace,
                     "one line per request (format: docs/daemon.md, Trace)"))
      .Add(cli::Integer("max-open-files", "N", &c->max_open_files, 1, 1 << 24,
                        "open files one session may hold; more opens get EMFILE (65536)"))
      .Add(cli::Flag("allow-setid", &c->allow_setid,
                     "let clients create files and directories with set-user-ID or\n"
                     "set-group-ID bits (dropped by default: the daemon's user would own them)"))
      .Add(cli::Choice("seal", &c->seal, {{"on", true}, {"off", false}},
                       "tag every frame of TCP connections after the handshake (on);\n"
                       "off leaves untagged the clients that also run with IORELAY_SEAL=off,\n"
                       "whose frames a man in the middle can alter: for measurement only"))
      .Add(cli::Choice("seal-tag", &c->seal_tag_auto, {{"auto", true}, {"poly1305", false}},
                       "the frame tags' algorithm: auto picks AES-GMAC when this CPU and the\n"
                       "client's have AES and carry-less multiply instructions, else Poly1305\n"
                       "(auto); poly1305 always (docs/daemon.md, Security)"))
      .Add(cli::Choice("shm", &c->shm, {{"on", true}, {"off", false}},
                       "move Unix-socket clients of this host and network namespace\n"
                       "to shared-memory rings when they ask (on)"))
      .Add(ShmRingBytes(c))
      .Add(cli::Choice("shm-in-place", &c->shm_in_place, {{"on", true}, {"off", false}},
                       "write large requests' data from the shared-memory ring and\n"
                       "read large replies into it, without a copy (on)"))
      .Add(cli::Choice("shm-pipes", &c->shm_pipes, {{"on", true}, {"off", false}},
                       "move large requests' data through a pipe each way, spliced\n"
                       "to and from the file without a copy by the daemon (on)"))
      .Add(cli::Integer("shm-poll-us", "N", &c->shm_poll_us, 0, 10'000,
                        "look at a shared-memory connection's ring for N us after its\n"
                        "last request before waiting for its doorbell, while its client\n"
                        "waits for replies awake; 0: never (20)"));
  return t;
}

void FillDefaults(Config& c) {
  if (c.listen.empty()) c.listen.push_back("tcp:127.0.0.1:0");
}

}  // namespace

std::string UsageText() {
  Config c;
  return Table(&c).Help();
}

nlohmann::json ConfigToJson(const Config& config) {
  Config c = config;
  return Table(&c).ToJson();
}

Result<Config> ConfigFromJson(const nlohmann::json& j) {
  Config c;
  IORELAY_RETURN_IF_ERROR(Table(&c).FromJson(j));
  return c;
}

Result<CommandLine> ParseCommandLine(int argc, const char* const* argv) {
  CommandLine cl;
  Result<cli::ParseOutcome> parsed = Table(&cl.config).Parse(argc, argv);
  if (!parsed.ok()) return parsed.status();
  cl.help = parsed->help;
  cl.print_config = parsed->print_config;
  FillDefaults(cl.config);
  return cl;
}

}  // namespace iorelay::daemon
