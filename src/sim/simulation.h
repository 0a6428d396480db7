// One simulated run: a platform, a pattern, I/O nodes with a scheduler and a placement policy,
// run on SimGrid, summarised as numbers. SimGrid allows one engine per process, so Run may be
// called once per process (tests fork; the tool runs once).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "sched/scheduler.h"
#include "sim/compute_node.h"
#include "sim/metadata_workload.h"
#include "sim/platform.h"
#include "sim/workload_pattern.h"

namespace iorelay::sim {

// Who issues the requests: an actor per rank, or per compute node (I/O nodes only; see
// sim/node_issuer.h), sending its ranks' requests one message each or, aggregated, one message
// per step for all its ranks.
enum class Issuer { kRank, kNode, kNodeAggregate };

struct RunConfig {
  Platform platform;
  PatternSpec pattern;
  // With files_per_rank > 0, the ranks run mdtest's phases (pattern's ranks and nodes) instead
  // of the pattern.
  MdtestSpec mdtest;
  int ionodes = 0;                 // 0: compute nodes access the storage directly
  std::string scheduler = "fifo";  // a src/sched registry spec: "aioli:quantum=64KiB"
  std::string placement = "block";
  uint64_t seed = 1;
  Issuer issuer = Issuer::kRank;
  // SimGrid's context factory; "thread" under sanitizers (they cannot follow raw contexts).
  std::string context_factory;
};

struct RunResult {
  uint64_t requests = 0;
  uint64_t bytes = 0;             // acknowledged to the ranks
  uint64_t bytes_at_storage = 0;  // written or read by the targets
  uint64_t dispatches = 0;        // scheduler dispatches, all I/O nodes (direct: requests)
  uint64_t storage_calls = 0;
  uint64_t storage_accesses = 0;    // device accesses (a striped call touches several targets)
  uint64_t metadata_ops = 0;        // opens served by the metadata server
  uint64_t token_handoffs = 0;      // write tokens moved between clients (storage.token_handoff)
  uint64_t range_negotiations = 0;  // byte-range token grants (storage.range_token)
  uint64_t metanode_updates = 0;    // writes that updated another host's metanode
  int errors = 0;
  double simulated_s = 0;  // the slowest rank's last completion
  double wall_s = 0;
  MdtestTimes mdtest;  // an mdtest run's phases
};

const char* IssuerName(Issuer issuer);

// Checks the whole configuration (pattern, scheduler spec, placement) before starting SimGrid;
// InvalidArgument naming the valid choices on bad input.
Status Validate(const RunConfig& config);
Result<RunResult> Run(const RunConfig& config);

// The run's description and numbers: bandwidth in MiB/s, simulated and wall time, requests,
// dispatches, requests per dispatch, simulated requests per wall second.
nlohmann::json ToJson(const RunConfig& config, const RunResult& result);
// The same without the wall-clock numbers (deterministic: golden outputs).
nlohmann::json DeterministicJson(const RunConfig& config, const RunResult& result);
// Adds the ranks' (or replayed sessions') requests, bytes and errors to `out`; its simulated
// time is the latest rank's last completion.
void AddRankResults(const std::vector<RankResult>& ranks, RunResult* out);
// The numbers every simulated run reports (requests, bytes, dispatches, storage calls,
// simulated time, bandwidth), as the pattern runs and the trace replays print them.
nlohmann::json ResultNumbers(const RunResult& result);

namespace detail {
// Shared by Run and RunReplay (sim/trace_replay.h).
Result<std::unique_ptr<sched::Scheduler>> MakeScheduler(const std::string& spec);
// SimGrid's command line for a run: the network model, small stacks, quiet logs, the context
// factory.
std::vector<std::string> EngineArgs(const RunConfig& config);
// That command line as argc/argv, alive as long as the engine made from it:
//   detail::EngineCommandLine cmd(config);
//   sg4::Engine engine(&cmd.argc, cmd.argv.data());
struct EngineCommandLine {
  explicit EngineCommandLine(const RunConfig& config);
  EngineCommandLine(const EngineCommandLine&) = delete;
  EngineCommandLine& operator=(const EngineCommandLine&) = delete;
  std::vector<std::string> args;
  std::vector<char*> argv;  // into args, then a null
  int argc = 0;
};
}  // namespace detail

// The network model every run uses, stated in the output.
inline constexpr const char* kNetworkModel = "CM02";

}  // namespace iorelay::sim
