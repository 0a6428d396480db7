// Command-line and JSON parsing of iorelayd's configuration. Only syntax is checked here;
// daemon.cc checks what needs the system (readable secrets, directories).
#include "daemon/config.h"

#include <charconv>
#include <fstream>
#include <map>

namespace iorelay::daemon {
namespace {

Result<int64_t> ParseInt(const std::string& option, const std::string& text, int64_t min,
                         int64_t max) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v < min || v > max) {
    return Status::InvalidArgument(option + " wants an integer in [" + std::to_string(min) + ", " +
                                   std::to_string(max) + "], got '" + text + "'");
  }
  return v;
}

Result<std::pair<std::string, std::string>> SplitPair(const std::string& option,
                                                      const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return Status::InvalidArgument(option + " wants A=B, got '" + text + "'");
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

// "FILE" or "FILE:weight=N" (N in [1, 1000000]).
Result<CredentialConfig> ParseCredential(const std::string& name, const std::string& value) {
  CredentialConfig c{name, value, 1};
  size_t at = value.rfind(":weight=");
  if (at != std::string::npos) {
    Result<int64_t> w =
        ParseInt("--credential " + name + " weight", value.substr(at + 8), 1, 1'000'000);
    if (!w.ok()) return w.status();
    c.file = value.substr(0, at);
    c.weight = static_cast<uint32_t>(*w);
  }
  if (c.file.empty()) return Status::InvalidArgument("--credential " + name + " has no file");
  return c;
}

Status CheckListen(const std::string& spec) {
  if (spec.rfind("tcp:", 0) == 0 || spec.rfind("unix:", 0) == 0) return Status::Ok();
  return Status::InvalidArgument("--listen wants tcp:HOST:PORT or unix:PATH, got '" + spec + "'");
}

Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("--config: cannot read " + path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("--config: " + path + " is not JSON");
  return j;
}

}  // namespace

const char* UsageText() {
  return "usage: iorelayd [options]\n"
         "  --listen tcp:HOST:PORT | unix:PATH   (repeatable; default tcp:127.0.0.1:0)\n"
         "  --export PREFIX=ROOT                  (repeatable) client paths under PREFIX map "
         "beneath ROOT\n"
         "  --credential NAME=FILE[:weight=N]     (repeatable) a job's secret; NAME is the app;\n"
         "                          N (default 1) is its QoS share for wfq and aioli; N > 1\n"
         "                          overrides the scheduler's weight.<app index>\n"
         "  --ready-file FILE       write the listening addresses there once ready\n"
         "  --workers N             worker threads (default 4)\n"
         "  --scheduler SPEC        request scheduler: NAME[:key=value,...] or JSON, e.g.\n"
         "                          aioli:quantum=64KiB (default fifo; see docs/schedulers.md)\n"
         "  --backend posix|null|emulated:PROFILE   (default posix); emulated delays every data\n"
         "                          call by a disk model: emulated:hdd, emulated:ssd,\n"
         "                          emulated:seek=8ms,bw=100MBps\n"
         "  --delay-us N            sleep N us before every backend call (tests)\n"
         "  --heartbeat-ms N        heartbeat period while requests are outstanding (200)\n"
         "  --handshake-timeout-ms N  close a connection not authenticated by then (10000)\n"
         "  --trace FILE            one line per request (format: docs/daemon.md, Trace)\n"
         "  --config FILE.json      the same keys as JSON\n"
         "  --print-config          print the effective configuration as JSON and exit\n";
}

nlohmann::json ConfigToJson(const Config& c) {
  nlohmann::json j;
  j["listen"] = c.listen;
  j["export"] = nlohmann::json::object();
  for (const auto& [prefix, root] : c.exports) j["export"][prefix] = root;
  j["credential"] = nlohmann::json::object();
  for (const CredentialConfig& cr : c.credentials) {
    j["credential"][cr.name] =
        cr.weight == 1 ? cr.file : cr.file + ":weight=" + std::to_string(cr.weight);
  }
  j["ready-file"] = c.ready_file;
  j["workers"] = c.workers;
  j["scheduler"] = c.scheduler;
  j["backend"] = c.backend;
  j["delay-us"] = c.delay_us;
  j["heartbeat-ms"] = c.heartbeat_ms;
  j["handshake-timeout-ms"] = c.handshake_timeout_ms;
  j["trace"] = c.trace;
  return j;
}

Result<Config> ConfigFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("configuration must be a JSON object");
  Config c;
  for (const auto& [key, v] : j.items()) {
    // (A named copy: clang 14, which builds the fuzz targets, cannot capture a binding.)
    auto bad = [name = std::string(key)] {
      return Status::InvalidArgument("config key '" + name + "' has a wrong type");
    };
    if (key == "listen") {
      if (!v.is_array()) return bad();
      for (const auto& e : v) {
        if (!e.is_string()) return bad();
        IORELAY_RETURN_IF_ERROR(CheckListen(e.get<std::string>()));
        c.listen.push_back(e.get<std::string>());
      }
    } else if (key == "export" || key == "credential") {
      if (!v.is_object()) return bad();
      for (const auto& [k, e] : v.items()) {
        if (!e.is_string()) return bad();
        if (key == "export") {
          c.exports.emplace_back(k, e.get<std::string>());
        } else {
          Result<CredentialConfig> cr = ParseCredential(k, e.get<std::string>());
          if (!cr.ok()) return cr.status();
          c.credentials.push_back(*cr);
        }
      }
    } else if (key == "scheduler" && v.is_object()) {
      c.scheduler = v.dump();  // an effective configuration read back as a JSON spec
    } else if (key == "ready-file" || key == "scheduler" || key == "backend" || key == "trace") {
      if (!v.is_string()) return bad();
      std::string s = v.get<std::string>();
      (key == "ready-file"  ? c.ready_file
       : key == "scheduler" ? c.scheduler
       : key == "backend"   ? c.backend
                            : c.trace) = s;
    } else if (key == "workers" || key == "delay-us" || key == "heartbeat-ms" ||
               key == "handshake-timeout-ms") {
      if (!v.is_number_integer()) return bad();
      int64_t n = v.get<int64_t>();
      if (key == "workers") {
        if (n < 1 || n > 1024) return Status::InvalidArgument("workers must be in [1, 1024]");
        c.workers = static_cast<int>(n);
      } else if (key == "delay-us") {
        if (n < 0) return Status::InvalidArgument("delay-us must be >= 0");
        c.delay_us = n;
      } else if (key == "heartbeat-ms") {
        if (n < 1 || n > 3600000) return Status::InvalidArgument("heartbeat-ms out of range");
        c.heartbeat_ms = static_cast<int>(n);
      } else {
        if (n < 1 || n > 3600000) {
          return Status::InvalidArgument("handshake-timeout-ms out of range");
        }
        c.handshake_timeout_ms = static_cast<int>(n);
      }
    } else {
      return Status::InvalidArgument("unknown config key '" + key + "'");
    }
  }
  return c;
}

Result<CommandLine> ParseCommandLine(int argc, const char* const* argv) {
  CommandLine cl;
  // --config first, wherever it is.
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--config") {
      if (i + 1 >= argc) return Status::InvalidArgument("--config needs a value");
      Result<nlohmann::json> j = ReadJsonFile(argv[i + 1]);
      if (!j.ok()) return j.status();
      Result<Config> c = ConfigFromJson(*j);
      if (!c.ok())
        return Status::InvalidArgument("--config " + std::string(argv[i + 1]) + ": " +
                                       c.status().message());
      cl.config = std::move(*c);
    }
  }
  bool cli_listen = false, cli_export = false, cli_credential = false;
  Config& c = cl.config;
  for (int i = 1; i < argc; ++i) {
    std::string opt = argv[i];
    if (opt == "--help" || opt == "-h") {
      cl.help = true;
      continue;
    }
    if (opt == "--print-config") {
      cl.print_config = true;
      continue;
    }
    static const std::map<std::string, int> kTakesValue = {
        {"--listen", 0},     {"--export", 1},   {"--credential", 2},
        {"--ready-file", 3}, {"--workers", 4},  {"--scheduler", 5},
        {"--backend", 6},    {"--delay-us", 7}, {"--heartbeat-ms", 8},
        {"--trace", 9},      {"--config", 10},  {"--handshake-timeout-ms", 11}};
    auto it = kTakesValue.find(opt);
    if (it == kTakesValue.end()) return Status::InvalidArgument("unknown option '" + opt + "'");
    if (i + 1 >= argc) return Status::InvalidArgument(opt + " needs a value");
    std::string val = argv[++i];
    switch (it->second) {
      case 0:
        IORELAY_RETURN_IF_ERROR(CheckListen(val));
        if (!cli_listen) c.listen.clear();
        cli_listen = true;
        c.listen.push_back(val);
        break;
      case 1:
      case 2: {
        Result<std::pair<std::string, std::string>> p = SplitPair(opt, val);
        if (!p.ok()) return p.status();
        if (it->second == 1) {
          if (!cli_export) c.exports.clear();
          cli_export = true;
          c.exports.push_back(*p);
          break;
        }
        Result<CredentialConfig> cr = ParseCredential(p->first, p->second);
        if (!cr.ok()) return cr.status();
        if (!cli_credential) c.credentials.clear();
        cli_credential = true;
        c.credentials.push_back(*cr);
        break;
      }
      case 3:
        c.ready_file = val;
        break;
      case 4: {
        Result<int64_t> n = ParseInt(opt, val, 1, 1024);
        if (!n.ok()) return n.status();
        c.workers = static_cast<int>(*n);
        break;
      }
      case 5:
        c.scheduler = val;
        break;
      case 6:
        c.backend = val;
        break;
      case 7: {
        Result<int64_t> n = ParseInt(opt, val, 0, 60'000'000);
        if (!n.ok()) return n.status();
        c.delay_us = *n;
        break;
      }
      case 8: {
        Result<int64_t> n = ParseInt(opt, val, 1, 3'600'000);
        if (!n.ok()) return n.status();
        c.heartbeat_ms = static_cast<int>(*n);
        break;
      }
      case 9:
        c.trace = val;
        break;
      case 10:
        break;  // already read
      case 11: {
        Result<int64_t> n = ParseInt(opt, val, 1, 3'600'000);
        if (!n.ok()) return n.status();
        c.handshake_timeout_ms = static_cast<int>(*n);
        break;
      }
    }
  }
  if (c.listen.empty()) c.listen.push_back("tcp:127.0.0.1:0");
  return cl;
}

}  // namespace iorelay::daemon
