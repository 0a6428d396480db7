// Wires a run together: hosts from the platform, storage, I/O nodes with their schedulers, ranks
// with their I/O node, then SimGrid runs until the last rank finishes.
#include "sim/simulation.h"

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <simgrid/s4u/Engine.hpp>
#include <vector>

#include "common/units.h"
#include "placement/topology_spec.h"
#include "sched/registry.h"
#include "sim/compute_node.h"
#include "sim/io_node.h"
#include "sim/ionode_placement.h"
#include "sim/network.h"
#include "sim/node_issuer.h"
#include "sim/storage_model.h"

namespace iorelay::sim {

namespace sg4 = simgrid::s4u;

namespace detail {

Result<std::unique_ptr<sched::Scheduler>> MakeScheduler(const std::string& spec) {
  sched::SchedulerRegistry registry;
  sched::RegisterBuiltinSchedulers(&registry);
  return registry.CreateFromSpec(spec);
}

std::vector<std::string> EngineArgs(const RunConfig& config) {
  std::vector<std::string> args = {
      "iorelay-sim",
      // CM02: max-min sharing with the bandwidths and latencies as written in the platform (no
      // TCP correction factors); no acknowledgement traffic on reverse routes.
      std::string("--cfg=network/model:") + kNetworkModel,
      "--cfg=network/crosstraffic:0",
      // Many small actors: small stacks without guard pages.
      "--cfg=contexts/stack-size:128",
      "--cfg=contexts/guard-size:0",
      "--log=root.thres:critical",
  };
  if (!config.context_factory.empty()) {
    args.push_back("--cfg=contexts/factory:" + config.context_factory);
  }
  return args;
}

EngineCommandLine::EngineCommandLine(const RunConfig& config) : args(EngineArgs(config)) {
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  argc = static_cast<int>(args.size());
}

}  // namespace detail

using detail::MakeScheduler;

const char* IssuerName(Issuer issuer) {
  switch (issuer) {
    case Issuer::kRank:
      return "rank";
    case Issuer::kNode:
      return "node";
    case Issuer::kNodeAggregate:
      return "node-aggregate";
  }
  return "?";
}

namespace {

// What a run needs that can fail, computed once: the pattern, the I/O nodes' placement, and for
// direct access over a topology the storage gateways'.
struct Prepared {
  Pattern pattern;
  IoNodePlacement placed;
  GatewayPlacement gateways;
  // The topology spec of the compute side's network; empty: the star network.
  const std::string& topology() const {
    return !placed.topology.empty() ? placed.topology : gateways.topology;
  }
};

// The node pairs of the topology that exchange messages: each compute node with the front its
// requests enter at (replies leave there), and with every storage gateway.
std::vector<std::pair<int32_t, int32_t>> TalkingPairs(const Prepared& p, int32_t nodes) {
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (int32_t v = 0; v < nodes; ++v) {
    if (!p.placed.ionode_of.empty()) {
      pairs.emplace_back(v, p.placed.bridges[p.placed.ionode_of[v]][p.placed.entry_of[v]]);
    }
    for (int32_t g : p.gateways.nodes) pairs.emplace_back(v, g);
  }
  return pairs;
}

// Direct access crosses the topology when the platform gives it storage gateways.
bool DirectOverTopology(const RunConfig& config) {
  return config.ionodes == 0 && config.platform.network.storage_gateways > 0;
}

Result<Prepared> Prepare(const RunConfig& config) {
  auto pattern = MakePattern(config.pattern);
  if (!pattern.ok()) return pattern.status();
  if (config.ionodes < 0) return Status::InvalidArgument("--ionodes must be >= 0");
  if (config.issuer != Issuer::kRank && config.ionodes == 0) {
    return Status::InvalidArgument(
        "--issuer node needs --ionodes >= 1 (direct access is per rank)");
  }
  if (config.issuer != Issuer::kRank && config.platform.cpu.cores > 0) {
    return Status::InvalidArgument(
        "the platform's cpu section charges each rank's requests: --issuer rank only");
  }
  if (config.mdtest.files_per_rank > 0) {
    if (config.issuer != Issuer::kRank)
      return Status::InvalidArgument("--mdtest needs --issuer rank");
    if (config.platform.storage.metadata_service_ns == 0) {
      return Status::InvalidArgument(
          "--mdtest needs a metadata server: the platform's storage.metadata_service");
    }
    if (config.pattern.stonewall_s > 0 || config.pattern.max_requests > 0) {
      return Status::InvalidArgument(
          "--mdtest runs every phase to its end (no --stonewall or --max-requests)");
    }
  } else if (config.mdtest.bytes > 0 || config.mdtest.shared_directory) {
    return Status::InvalidArgument("--mdtest-bytes and --mdtest-shared-dir need --mdtest N");
  }
  Prepared p{*pattern, {}, {}};
  if (DirectOverTopology(config)) {
    auto gateways = PlaceStorageGateways(config.platform.network.topology,
                                         static_cast<int32_t>(config.pattern.nodes),
                                         config.platform.network.storage_gateways);
    if (!gateways.ok()) return gateways.status();
    p.gateways = std::move(*gateways);
  }
  // (checked without I/O nodes too: a misspelt scheduler is an error, not ignored)
  if (auto s = MakeScheduler(config.scheduler); !s.ok()) return s.status();
  if (config.ionodes > 0) {
    auto placed =
        PlaceIoNodes(config.platform.network.topology, config.platform.ionode.layout,
                     config.placement, static_cast<int32_t>(config.pattern.nodes), config.ionodes);
    if (!placed.ok()) return placed.status();
    p.placed = std::move(*placed);
  }
  return p;
}

}  // namespace

Status Validate(const RunConfig& config) { return Prepare(config).status(); }

Result<RunResult> Run(const RunConfig& config) {
  const auto wall_start = std::chrono::steady_clock::now();
  auto prepared = Prepare(config);
  if (!prepared.ok()) return prepared.status();
  const Pattern& pattern = prepared->pattern;
  const IoNodePlacement& placed = prepared->placed;
  const auto nodes = static_cast<int32_t>(config.pattern.nodes);
  // The topology is the compute side's network when the platform gives its link bandwidth and
  // there are I/O nodes or storage gateways (without gateways, direct access uses the star
  // network: the storage lives in another zone).
  std::unique_ptr<placement::Topology> topology;
  if (config.platform.network.link_Bps > 0 && !prepared->topology().empty()) {
    topology = std::move(placement::ParseTopology(prepared->topology()).value());
  }

  detail::EngineCommandLine cmd(config);
  sg4::Engine engine(&cmd.argc, cmd.argv.data());

  const Hosts hosts =
      topology != nullptr
          ? BuildTopologyNetwork(config.platform, *topology, nodes, placed.bridges,
                                 prepared->gateways.nodes, TalkingPairs(*prepared, nodes))
          : BuildStarNetwork(config.platform, nodes, config.ionodes);
  StorageModel storage(config.platform.storage, hosts.storage, hosts.metadata, config.seed);
  std::vector<CpuPool> node_cpu, ionode_cpu;
  for (sg4::Host* pool : hosts.cpu_of_node) node_cpu.emplace_back(config.platform.cpu, pool);
  for (sg4::Host* pool : hosts.cpu_of_ionode) ionode_cpu.emplace_back(config.platform.cpu, pool);
  std::vector<std::unique_ptr<IoNode>> ionodes;
  const auto mailbox_of = [&placed, &ionodes](uint32_t node) {
    return ionodes[placed.ionode_of[node]]->mailbox(placed.entry_of[node]);
  };
  for (int k = 0; k < config.ionodes; ++k) {
    ionodes.push_back(std::make_unique<IoNode>(
        k, hosts.ionode_front[k], hosts.ionode_storage[k], MakeScheduler(config.scheduler).value(),
        config.platform.ionode.slots, config.platform.ionode.request_overhead_ns, &storage,
        &ionode_cpu[k],
        static_cast<size_t>(k) < hosts.ionode_bridge.size() ? hosts.ionode_bridge[k]
                                                            : std::vector<sg4::Host*>{}));
    ionodes.back()->Start();
  }
  std::mt19937_64 rng(config.seed);
  const int64_t jitter_ns = config.platform.compute.start_jitter_ns;
  std::vector<RankResult> ranks(config.pattern.ranks);
  // The last rank to finish ends the I/O nodes, so that the simulation ends.
  uint32_t running = config.pattern.ranks;
  const std::function<void()> finished = [&running, &ionodes] {
    if (--running > 0) return;
    for (const auto& io : ionodes) io->Stop();
  };
  // The wear-out's participants: one actor per rank, or per node that has ranks.
  const uint32_t actors =
      config.issuer == Issuer::kRank
          ? config.pattern.ranks
          : (config.pattern.ranks + pattern.ranks_per_node - 1) / pattern.ranks_per_node;
  std::unique_ptr<WearOut> wear_out;
  if (pattern.spec.wearout) wear_out = std::make_unique<WearOut>(actors);
  for (uint32_t node = 0; config.issuer != Issuer::kRank && node < pattern.spec.nodes; ++node) {
    const uint32_t first = node * pattern.ranks_per_node;
    if (first >= config.pattern.ranks) break;
    const uint32_t count = std::min(pattern.ranks_per_node, config.pattern.ranks - first);
    const int64_t start_ns =
        jitter_ns > 0 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(jitter_ns + 1)) : 0;
    StartNodeIssuer(pattern, node, first, count, hosts.compute[node], mailbox_of(node),
                    static_cast<double>(start_ns) * 1e-9, config.issuer == Issuer::kNodeAggregate,
                    storage.has_metadata(), wear_out.get(), &ranks, &finished);
  }
  MdtestTimes mdtest_times;
  const sg4::BarrierPtr barrier =
      config.mdtest.files_per_rank > 0 ? sg4::Barrier::create(config.pattern.ranks) : nullptr;
  for (uint32_t r = 0; config.issuer == Issuer::kRank && r < config.pattern.ranks; ++r) {
    const uint32_t node = pattern.NodeOf(r);
    RankTarget target;
    target.storage = &storage;
    target.wear_out = wear_out.get();
    target.cpu = &node_cpu[node];
    if (config.ionodes > 0) target.ionode = mailbox_of(node);
    if (!hosts.gateway_front.empty()) {
      target.gateway_front = &hosts.gateway_front;
      target.gateway_storage = &hosts.gateway_storage;
    }
    const int64_t start_ns =
        jitter_ns > 0 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(jitter_ns + 1)) : 0;
    if (config.mdtest.files_per_rank > 0) {
      StartMdtestRank(config.mdtest, r, hosts.compute[node], target,
                      static_cast<double>(start_ns) * 1e-9, barrier, &mdtest_times, &ranks[r],
                      &finished);
      continue;
    }
    StartRank(pattern, r, hosts.compute[node], target, static_cast<double>(start_ns) * 1e-9,
              &ranks[r], &finished);
  }
  engine.run();

  RunResult out;
  AddRankResults(ranks, &out);
  out.mdtest = mdtest_times;
  if (running != 0) {
    // SimGrid ran out of events with ranks still waiting: a request was never answered.
    return Status::IOError(fmt::format(
        "the simulation stopped with {} of {} ranks unfinished ({} requests answered; a "
        "scheduler held requests forever?)",
        running, config.pattern.ranks, out.requests));
  }
  out.bytes_at_storage = storage.bytes_written() + storage.bytes_read();
  out.storage_accesses = storage.accesses();
  out.metadata_ops = storage.metadata_ops();
  out.token_handoffs = storage.token_handoffs();
  out.range_negotiations = storage.range_negotiations();
  out.metanode_updates = storage.metanode_updates();
  if (config.ionodes == 0) {
    out.dispatches = out.requests;
    out.storage_calls = out.requests;
  }
  for (const auto& io : ionodes) {
    out.dispatches += io->counters().dispatches;
    out.storage_calls += io->counters().calls;
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

namespace {

// mdtest's summary: each phase's files, time and rate.
nlohmann::json MdtestJson(const RunConfig& config, const RunResult& r) {
  const uint64_t files = config.mdtest.files_per_rank * config.pattern.ranks;
  nlohmann::json phases = nlohmann::json::array();
  for (int k = 0; k < kMdtestPhases; ++k) {
    const double s = r.mdtest.end_s[k] - r.mdtest.start_s[k];
    phases.push_back({{"phase", MdtestPhaseName(k)},
                      {"files", files},
                      {"seconds", s},
                      {"ops_per_s", s > 0 ? static_cast<double>(files) / s : 0}});
  }
  return {{"files_per_rank", config.mdtest.files_per_rank},
          {"bytes", units::FormatBytes(config.mdtest.bytes)},
          {"shared_directory", config.mdtest.shared_directory},
          {"phases", phases}};
}

}  // namespace

nlohmann::json DeterministicJson(const RunConfig& config, const RunResult& r) {
  const PatternSpec& p = config.pattern;
  const Pattern pattern = *MakePattern(p);
  nlohmann::json j = {
      {"platform", config.platform.name},
      {"network_model", kNetworkModel},
      {"network",
       config.platform.network.link_Bps > 0 && (config.ionodes > 0 || DirectOverTopology(config))
           ? ResolveTopology(config.platform.network.topology, static_cast<int32_t>(p.nodes))
                 .value()
           : "star"},
      {"pattern",
       {{"layout", LayoutName(p.layout)},
        {"spatiality", SpatialityName(p.spatiality)},
        {"operation", p.write ? "write" : "read"},
        {"odirect", p.odirect},
        {"request", units::FormatBytes(p.request_bytes)},
        {"block", units::FormatBytes(pattern.shape.block_bytes)},
        {"segments", pattern.shape.segments},
        {"stonewall_s", p.stonewall_s},
        {"ranks", p.ranks},
        {"nodes", p.nodes}}},
      {"ionodes", config.ionodes},
      {"scheduler", config.ionodes > 0 ? config.scheduler : "none"},
      {"placement", config.ionodes > 0 ? config.placement : "none"},
      {"seed", config.seed},
      {"issuer", IssuerName(config.issuer)},
  };
  if (config.platform.ionode.layout == IoLayoutKind::kBgq) j["ionode_layout"] = "bgq";
  if (DirectOverTopology(config)) j["storage_gateways"] = config.platform.network.storage_gateways;
  if (p.wearout) j["pattern"]["wearout"] = true;
  j.update(ResultNumbers(r));
  j["metadata_ops"] = r.metadata_ops;
  if (config.mdtest.files_per_rank > 0) j["mdtest"] = MdtestJson(config, r);
  if (config.platform.storage.token_handoff_ns > 0) j["token_handoffs"] = r.token_handoffs;
  if (config.platform.storage.range_token_ns > 0) {
    j["range_negotiations"] = r.range_negotiations;
  }
  if (config.platform.storage.has_metanode()) j["metanode_updates"] = r.metanode_updates;
  return j;
}

void AddRankResults(const std::vector<RankResult>& ranks, RunResult* out) {
  for (const RankResult& r : ranks) {
    out->requests += r.requests;
    out->bytes += r.bytes;
    out->errors += r.errors;
    out->simulated_s = std::max(out->simulated_s, r.end_s);
  }
}

nlohmann::json ResultNumbers(const RunResult& r) {
  const double mib = static_cast<double>(r.bytes) / (1024.0 * 1024.0);
  return {
      {"requests", r.requests},
      {"errors", r.errors},
      {"bytes", r.bytes},
      {"bytes_at_storage", r.bytes_at_storage},
      {"dispatches", r.dispatches},
      {"requests_per_dispatch",
       r.dispatches > 0 ? static_cast<double>(r.requests) / static_cast<double>(r.dispatches) : 0},
      {"storage_calls", r.storage_calls},
      {"storage_accesses", r.storage_accesses},
      {"simulated_time_s", r.simulated_s},
      {"bandwidth_MiBps", r.simulated_s > 0 ? mib / r.simulated_s : 0},
  };
}

nlohmann::json ToJson(const RunConfig& config, const RunResult& r) {
  nlohmann::json j = DeterministicJson(config, r);
  if (config.pattern.max_requests > 0) j["pattern"]["max_requests"] = config.pattern.max_requests;
  j["wall_time_s"] = r.wall_s;
  j["requests_per_wall_s"] = r.wall_s > 0 ? static_cast<double>(r.requests) / r.wall_s : 0;
  return j;
}

}  // namespace iorelay::sim
