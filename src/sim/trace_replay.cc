// Trace reading, the replaying clients and the dispatch comparison (see trace_replay.h).
#include "sim/trace_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <string_view>

#include "sim/compute_node.h"
#include "sim/io_node.h"
#include "sim/io_request.h"
#include "sim/network.h"
#include "sim/storage_model.h"

namespace iorelay::sim {

namespace sg4 = simgrid::s4u;

namespace {

constexpr std::string_view kHeader =
    "arrival_ns\tcompletion_ns\tsession\tapp\tdev\tino\top\thandle\toffset\tsize\tflags\t"
    "dispatch\tqueue_ns\tresult";
constexpr size_t kColumns = 14;
// The version-2 columns replay reads (trace.h's TraceRecord, in order).
enum Column : size_t {
  kArrival = 0,
  kCompletion = 1,
  kSession = 2,
  kApp = 3,
  kDev = 4,
  kIno = 5,
  kOp = 6,
  kOffset = 8,
  kSize = 9,
  kFlags = 10,
  kDispatch = 11,
};

template <typename T>
bool ParseInt(std::string_view s, T* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<std::string_view> SplitTabs(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string_view::npos ? tab : tab - start));
    if (tab == std::string_view::npos) return out;
    start = tab + 1;
  }
}

// FNV-1a, 64 bits: a digest of the dispatch list that is stable across runs and machines.
void Fnv(uint64_t* h, std::string_view s) {
  for (unsigned char c : s) {
    *h ^= c;
    *h *= 1099511628211ull;
  }
}

// Numbers keys by first appearance: the index of `key` in `keys`, appended when new (`index`
// maps each key to its number). Files and application names of a trace, and of merged traces.
template <typename Key>
uint32_t Intern(const Key& key, std::map<Key, uint32_t>* index, std::vector<Key>* keys) {
  auto [it, added] = index->try_emplace(key, static_cast<uint32_t>(keys->size()));
  if (added) keys->push_back(key);
  return it->second;
}

using FileIndex = std::map<std::pair<uint64_t, uint64_t>, uint32_t>;
using AppIndex = std::map<std::string, uint32_t>;

}  // namespace

uint64_t ReplayTrace::requests() const {
  uint64_t n = 0;
  for (const auto& s : sessions) n += s.size();
  return n;
}

Result<ReplayTrace> ParseReplayTrace(std::istream& in, const std::string& name) {
  ReplayTrace t;
  t.path = name;
  std::string line;
  const std::string version = fmt::format("# iorelay-trace {}", kReplayTraceVersion);
  if (!std::getline(in, line) || line != version) {
    return Status::InvalidArgument(
        fmt::format("{}: starts with '{}', expected '{}'", name, line.substr(0, 60), version));
  }
  if (!std::getline(in, line) || line != kHeader) {
    return Status::InvalidArgument(
        fmt::format("{}: line 2 is not the version {} header", name, kReplayTraceVersion));
  }
  FileIndex files;
  AppIndex apps;
  std::map<uint64_t, uint32_t> session_index;
  bool any = false;
  for (uint64_t number = 3; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    ++t.rows;
    const std::vector<std::string_view> f = SplitTabs(line);
    if (f.size() != kColumns) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: {} columns, expected {}", name, number, f.size(), kColumns));
    }
    const std::string_view op = f[kOp];
    const bool positional = op == "pread" || op == "pwrite";
    if (!positional && op != "read" && op != "write") continue;  // not a data request
    TraceRequest r;
    uint64_t session = 0;
    uint64_t dev = 0;
    uint64_t ino = 0;
    if (!ParseInt(f[kArrival], &r.arrival_ns) || !ParseInt(f[kCompletion], &r.completion_ns) ||
        !ParseInt(f[kSession], &session) || !ParseInt(f[kDev], &dev) || !ParseInt(f[kIno], &ino) ||
        !ParseInt(f[kOffset], &r.offset) || !ParseInt(f[kSize], &r.length) ||
        !ParseInt(f[kDispatch], &r.dispatch)) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: a number column is not a number", name, number));
    }
    r.write = op == "pwrite" || op == "write";
    r.positional = positional;
    const std::string_view flags = f[kFlags];
    if (flags.find('D') != std::string_view::npos) r.merge_class |= kMergeClassDirect;
    if (flags.find('S') != std::string_view::npos) r.merge_class |= kMergeClassSync;
    r.append = flags.find('A') != std::string_view::npos;
    r.file = Intern(std::pair{dev, ino}, &files, &t.file_keys);
    r.app = Intern(std::string(f[kApp]), &apps, &t.app_names);
    auto [it, added] = session_index.try_emplace(session, t.sessions.size());
    if (added) {
      t.session_ids.push_back(session);
      t.ionode_of_session.push_back(0);
      t.sessions.emplace_back();
    }
    t.first_arrival_ns = any ? std::min(t.first_arrival_ns, r.arrival_ns) : r.arrival_ns;
    t.last_completion_ns = any ? std::max(t.last_completion_ns, r.completion_ns) : r.completion_ns;
    any = true;
    t.sessions[it->second].push_back(r);
  }
  // The daemon writes a row when it answers; a session's order is its arrival order (stable:
  // equal arrivals keep the file's order).
  for (auto& s : t.sessions) {
    std::stable_sort(s.begin(), s.end(), [](const TraceRequest& a, const TraceRequest& b) {
      return a.arrival_ns < b.arrival_ns;
    });
  }
  t.files = files.size();
  t.apps = apps.size();
  return t;
}

Result<ReplayTrace> ReadReplayTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument(fmt::format("{}: cannot open the trace", path));
  return ParseReplayTrace(in, path);
}

ReplayTrace MergeReplayTraces(std::vector<ReplayTrace> traces) {
  if (traces.size() == 1) return std::move(traces[0]);
  ReplayTrace out;
  out.ionodes = static_cast<uint32_t>(traces.size());
  FileIndex files;
  AppIndex apps;
  bool any = false;
  for (uint32_t k = 0; k < traces.size(); ++k) {
    ReplayTrace& t = traces[k];
    out.path += (k > 0 ? "," : "") + t.path;
    out.rows += t.rows;
    std::vector<uint32_t> file_of;  // t's file index → merged
    for (const auto& key : t.file_keys) file_of.push_back(Intern(key, &files, &out.file_keys));
    std::vector<uint32_t> app_of;
    for (const std::string& name : t.app_names) {
      app_of.push_back(Intern(name, &apps, &out.app_names));
    }
    for (size_t s = 0; s < t.sessions.size(); ++s) {
      for (TraceRequest& r : t.sessions[s]) {
        r.file = file_of[r.file];
        r.app = app_of[r.app];
        // The daemons number their dispatches independently: trace k's in their own range.
        if (r.dispatch != 0) r.dispatch += (uint64_t{k} + 1) << 40;
      }
      out.session_ids.push_back(t.session_ids[s]);
      out.ionode_of_session.push_back(k);
      out.sessions.push_back(std::move(t.sessions[s]));
    }
    if (!t.sessions.empty()) {
      out.first_arrival_ns =
          any ? std::min(out.first_arrival_ns, t.first_arrival_ns) : t.first_arrival_ns;
      out.last_completion_ns =
          any ? std::max(out.last_completion_ns, t.last_completion_ns) : t.last_completion_ns;
      any = true;
    }
  }
  out.files = out.file_keys.size();
  out.apps = out.app_names.size();
  return out;
}

Result<ReplayTrace> ReadReplayTraces(const std::string& paths) {
  std::vector<std::string> names;
  for (size_t start = 0; start <= paths.size();) {
    const size_t comma = std::min(paths.find(',', start), paths.size());
    names.push_back(paths.substr(start, comma - start));
    start = comma + 1;
  }
  if (std::find(names.begin(), names.end(), "") != names.end()) {
    return Status::InvalidArgument(
        fmt::format("--replay '{}': an empty trace name (paths are joined by ',')", paths));
  }
  std::vector<ReplayTrace> traces;
  for (const std::string& name : names) {
    auto t = ReadReplayTrace(name);
    if (!t.ok()) return t.status();
    traces.push_back(std::move(*t));
  }
  return MergeReplayTraces(std::move(traces));
}

std::vector<DispatchSet> TraceDispatches(const ReplayTrace& trace) {
  std::map<uint64_t, DispatchSet> by_number;
  for (uint32_t s = 0; s < trace.sessions.size(); ++s) {
    for (uint64_t i = 0; i < trace.sessions[s].size(); ++i) {
      const uint64_t d = trace.sessions[s][i].dispatch;
      if (d != 0) by_number[d].emplace_back(s, i);
    }
  }
  std::vector<DispatchSet> out;
  for (auto& [number, set] : by_number) {
    std::sort(set.begin(), set.end());
    out.push_back(std::move(set));
  }
  return out;
}

uint64_t CountIdentical(const std::vector<DispatchSet>& theirs,
                        const std::vector<DispatchSet>& ours) {
  std::set<DispatchSet> made;
  for (DispatchSet d : ours) {
    std::sort(d.begin(), d.end());
    made.insert(std::move(d));
  }
  uint64_t n = 0;
  for (DispatchSet d : theirs) {
    std::sort(d.begin(), d.end());
    if (made.count(d) != 0) ++n;
  }
  return n;
}

Result<ReplayResult> RunReplay(const RunConfig& config, const ReplayTrace& trace) {
  const auto wall_start = std::chrono::steady_clock::now();
  auto scheduler = detail::MakeScheduler(config.scheduler);
  if (!scheduler.ok()) return scheduler.status();
  if (trace.sessions.empty()) {
    return Status::InvalidArgument(trace.path + ": no data requests (pread, pwrite, read, write)");
  }
  if (config.platform.cpu.cores > 0) {
    return Status::InvalidArgument("--replay does not model the platform's cpu section");
  }
  detail::EngineCommandLine cmd(config);
  sg4::Engine engine(&cmd.argc, cmd.argv.data());

  // One compute host per session (a client process), an I/O node per trace, the platform's
  // storage.
  const int clients = static_cast<int>(trace.sessions.size());
  const Hosts hosts = BuildStarNetwork(config.platform, clients, static_cast<int>(trace.ionodes));
  StorageModel storage(config.platform.storage, hosts.storage, {}, config.seed);
  IoNode::DispatchLog log;  // every I/O node's dispatches, in the order they started
  std::vector<std::unique_ptr<IoNode>> ionodes;
  for (uint32_t k = 0; k < trace.ionodes; ++k) {
    ionodes.push_back(std::make_unique<IoNode>(
        static_cast<int>(k), hosts.ionode_front[k], hosts.ionode_storage[k],
        k == 0 ? std::move(*scheduler) : detail::MakeScheduler(config.scheduler).value(),
        config.platform.ionode.slots, config.platform.ionode.request_overhead_ns, &storage));
    ionodes.back()->set_dispatch_log(&log);
    ionodes.back()->Start();
  }

  std::vector<RankResult> results(trace.sessions.size());
  int running = clients;
  for (uint32_t s = 0; s < trace.sessions.size(); ++s) {
    sg4::Actor::create(
        "session" + std::to_string(s), hosts.compute[s], [&trace, &results, &running, &ionodes, s] {
          IoNode& ionode = *ionodes[trace.ionode_of_session[s]];
          const std::vector<TraceRequest>& requests = trace.sessions[s];
          const int64_t start_ns = requests.front().arrival_ns - trace.first_arrival_ns;
          if (start_ns > 0) sg4::this_actor::sleep_until(static_cast<double>(start_ns) * 1e-9);
          sg4::Mailbox* reply = sg4::Mailbox::by_name("s" + std::to_string(s));
          RankResult& out = results[s];
          for (uint64_t i = 0; i < requests.size(); ++i) {
            const TraceRequest& t = requests[i];
            IoRequest r;
            r.rank = s;
            r.index = i;
            r.file = t.file;
            r.app = t.app;
            r.write = t.write;
            r.offset = t.offset;
            r.length = t.length;
            r.merge_class = t.merge_class;
            r.positional = t.positional;
            r.append = t.append;
            r.reply_to = reply;
            ionode.mailbox()->put(&r, kMessageHeaderBytes + (r.write ? r.length : 0));
            reply->get<IoRequest>();  // the same message, answered
            ++out.requests;
            out.bytes += r.bytes_done;
            if (r.error != 0) ++out.errors;
          }
          out.end_s = sg4::Engine::get_clock();
          if (--running == 0) {
            for (const auto& io : ionodes) io->Stop();
          }
        });
  }
  engine.run();

  ReplayResult out;
  RunResult& run = out.run;
  AddRankResults(results, &run);
  if (running != 0) {
    return Status::IOError(
        fmt::format("the replay stopped with {} of {} sessions unfinished ({} requests answered; a "
                    "scheduler held requests forever?)",
                    running, clients, run.requests));
  }
  run.bytes_at_storage = storage.bytes_written() + storage.bytes_read();
  run.storage_accesses = storage.accesses();
  for (const auto& io : ionodes) {
    run.dispatches += io->counters().dispatches;
    run.storage_calls += io->counters().calls;
  }
  for (auto& d : log) std::sort(d.begin(), d.end());
  out.dispatches = std::move(log);
  const std::vector<DispatchSet> theirs = TraceDispatches(trace);
  out.trace_dispatches = theirs.size();
  out.identical_dispatches = CountIdentical(theirs, out.dispatches);
  out.identical_dispatch_share = theirs.empty() ? 0
                                                : static_cast<double>(out.identical_dispatches) /
                                                      static_cast<double>(theirs.size());
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

nlohmann::json ReplayJson(const RunConfig& config, const ReplayTrace& trace,
                          const ReplayResult& result, bool list_dispatches) {
  const RunResult& r = result.run;
  uint64_t digest = 14695981039346656037ull;
  nlohmann::json list = nlohmann::json::array();
  for (const DispatchSet& d : result.dispatches) {
    nlohmann::json members = nlohmann::json::array();
    for (const auto& [s, i] : d) {
      // (One trace: the digest and the list of the single-daemon format.)
      const uint32_t k = trace.ionode_of_session[s];
      Fnv(&digest, trace.ionodes == 1 ? fmt::format("{}:{},", trace.session_ids[s], i)
                                      : fmt::format("{}:{}:{},", k, trace.session_ids[s], i));
      if (list_dispatches) {
        members.push_back(trace.ionodes == 1 ? nlohmann::json::array({trace.session_ids[s], i})
                                             : nlohmann::json::array({k, trace.session_ids[s], i}));
      }
    }
    Fnv(&digest, ";");
    if (list_dispatches) list.push_back(std::move(members));
  }
  nlohmann::json j = {
      {"mode", "replay"},
      {"trace", trace.path},
      {"platform", config.platform.name},
      {"network_model", kNetworkModel},
      {"scheduler", config.scheduler},
      {"ionodes", trace.ionodes},
      {"seed", config.seed},
      {"sessions", trace.sessions.size()},
      {"files", trace.files},
      {"trace_rows", trace.rows},
      {"trace_requests", trace.requests()},
      {"trace_dispatches", result.trace_dispatches},
      {"trace_requests_per_dispatch",
       result.trace_dispatches > 0
           ? static_cast<double>(trace.requests()) / static_cast<double>(result.trace_dispatches)
           : 0},
      // The daemon's time for the same requests: first arrival to last reply.
      {"trace_time_s",
       static_cast<double>(trace.last_completion_ns - trace.first_arrival_ns) * 1e-9},
      {"identical_dispatches", result.identical_dispatches},
      {"identical_dispatch_share", result.identical_dispatch_share},
      {"dispatch_digest", fmt::format("{:016x}", digest)},
      {"wall_time_s", r.wall_s},
  };
  j.update(ResultNumbers(r));
  if (list_dispatches) j["dispatch_list"] = std::move(list);
  return j;
}

}  // namespace iorelay::sim
