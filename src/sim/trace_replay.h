// Closed-loop replay of iorelayd request traces (`iorelayd --trace FILE`, format version 2,
// docs/daemon.md "Trace"), each daemon's trace through its own simulated I/O node, and the
// same-code check: which of the daemons' real dispatches the simulator's run of the same
// scheduler also made.
//
// Each trace session is one client: it issues its data requests (pread, pwrite, read, write) in
// their recorded arrival order, the next one when the previous one was answered, starting at
// its first recorded arrival (relative to the first of all traces: the traces of several daemons
// must come from one clock, i.e. one host or network namespaces of one kernel). Each (dev, ino)
// is one simulated file, across traces too. A request is named by its session and its index
// among that session's data requests.
#pragma once

#include <cstdint>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "sim/simulation.h"

namespace iorelay::sim {

inline constexpr int kReplayTraceVersion = 2;

struct TraceRequest {
  uint64_t file = 0;  // simulated file: the trace's (dev, ino) in order of first appearance
  uint32_t app = 0;   // the trace's app names in order of first appearance
  bool write = true;
  bool positional = true;  // pread/pwrite; read/write go at the recorded offset, alone
  bool append = false;     // flag A
  uint32_t merge_class = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  int64_t arrival_ns = 0;
  int64_t completion_ns = 0;
  uint64_t dispatch = 0;  // the daemon's dispatch (0: outside the scheduler)
};

struct ReplayTrace {
  std::string path;                         // several traces: their paths joined by ','
  uint64_t rows = 0;                        // all rows, data or not
  std::vector<uint64_t> session_ids;        // the trace's session numbers, by session index
  uint32_t ionodes = 1;                     // one per daemon's trace
  std::vector<uint32_t> ionode_of_session;  // by session index: the trace it came from
  // By session index, each session's data requests in arrival order.
  std::vector<std::vector<TraceRequest>> sessions;
  uint64_t files = 0;
  std::vector<std::pair<uint64_t, uint64_t>> file_keys;  // simulated file → (dev, ino)
  uint64_t apps = 0;
  std::vector<std::string> app_names;  // by app index
  int64_t first_arrival_ns = 0;        // of the data requests
  int64_t last_completion_ns = 0;      // of the data requests
  uint64_t requests() const;
};

// One line naming `name` on a wrong version line, header or row.
Result<ReplayTrace> ParseReplayTrace(std::istream& in, const std::string& name);
Result<ReplayTrace> ReadReplayTrace(const std::string& path);
// Several daemons' traces as one replay: trace k's sessions go through I/O node k, files are
// matched by (dev, ino), the daemons' dispatch numbers are kept apart, app names are numbered
// anew over all traces.
ReplayTrace MergeReplayTraces(std::vector<ReplayTrace> traces);
// `paths`: one trace, or several joined by ','.
Result<ReplayTrace> ReadReplayTraces(const std::string& paths);

// A dispatch as its requests' (session index, request index), sorted.
using DispatchSet = std::vector<std::pair<uint32_t, uint64_t>>;

struct ReplayResult {
  RunResult run;
  std::vector<DispatchSet> dispatches;  // the simulator's, in the order they started
  uint64_t trace_dispatches = 0;        // the daemon's (data requests with dispatch > 0)
  uint64_t identical_dispatches = 0;    // of those, the ones the simulator made too
  double identical_dispatch_share = 0;
};

// The daemon's dispatches of `trace` as request sets, by dispatch number.
std::vector<DispatchSet> TraceDispatches(const ReplayTrace& trace);
// How many of `theirs` appear exactly (the same request set) among `ours`.
uint64_t CountIdentical(const std::vector<DispatchSet>& theirs,
                        const std::vector<DispatchSet>& ours);

// Replays `trace` on config.platform through trace.ionodes I/O nodes running config.scheduler
// (the other RunConfig fields but seed and context_factory are unused). One SimGrid engine per
// process.
Result<ReplayResult> RunReplay(const RunConfig& config, const ReplayTrace& trace);

// The result as JSON: requests, bytes, dispatches, requests per dispatch, simulated time, the
// share of identical dispatches, a digest of the simulator's dispatches and, with
// `list_dispatches`, the dispatches themselves as [[session, index], ...] (trace session ids;
// [trace, session, index] when several traces are replayed).
nlohmann::json ReplayJson(const RunConfig& config, const ReplayTrace& trace,
                          const ReplayResult& result, bool list_dispatches);

}  // namespace iorelay::sim
