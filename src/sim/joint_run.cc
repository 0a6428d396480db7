// Several jobs in one simulation: the star network and the storage built once for all of them,
// then each job's I/O nodes and ranks as a run of one job builds its own, numbered after the
// jobs before it (compute nodes, I/O nodes, ranks, files), so nothing of one job is another's.
#include "sim/joint_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <simgrid/s4u/Engine.hpp>

#include "common/units.h"
#include "sim/compute_node.h"
#include "sim/cpu_pool.h"
#include "sim/io_node.h"
#include "sim/ionode_placement.h"
#include "sim/network.h"
#include "sim/simulation.h"
#include "sim/storage_model.h"
#include "workload/pattern.h"

namespace iorelay::sim {

namespace sg4 = simgrid::s4u;

namespace {

struct PreparedJob {
  Pattern pattern;
  IoNodePlacement placed;
  int node_base = 0;    // its first compute node in the whole simulation
  int ionode_base = 0;  // its first I/O node
  uint32_t rank_base = 0;
  uint64_t file_base = 0;
};

Result<std::vector<PreparedJob>> Prepare(const JointConfig& config) {
  if (config.jobs.empty()) return Status::InvalidArgument("a joint run needs at least one job");
  const auto& network = config.platform.network;
  if ((network.link_Bps > 0 && !network.topology.empty()) || network.storage_gateways > 0) {
    return Status::InvalidArgument(
        "a joint run builds the star network only: a platform without network.link and "
        "network.storage_gateways");
  }
  if (config.platform.ionode.layout == IoLayoutKind::kBgq) {
    return Status::InvalidArgument("a joint run places I/O nodes with the spread layout only");
  }
  if (auto s = detail::MakeScheduler(config.scheduler); !s.ok()) return s.status();
  std::vector<PreparedJob> out;
  int nodes = 0, ionodes = 0;
  uint32_t ranks = 0;
  uint64_t files = 0;
  for (size_t j = 0; j < config.jobs.size(); ++j) {
    const JointJob& job = config.jobs[j];
    auto pattern = MakePattern(job.pattern);
    if (!pattern.ok()) {
      return Status::InvalidArgument(fmt::format("job {}: {}", j, pattern.status().message()));
    }
    if (job.ionodes < 0) return Status::InvalidArgument(fmt::format("job {}: ionodes < 0", j));
    if (job.start_s < 0) return Status::InvalidArgument(fmt::format("job {}: start < 0", j));
    PreparedJob p{*pattern, {}, nodes, ionodes, ranks, files};
    if (job.ionodes > 0) {
      auto placed = PlaceIoNodes(network.topology, config.platform.ionode.layout, config.placement,
                                 static_cast<int32_t>(job.pattern.nodes), job.ionodes);
      if (!placed.ok()) {
        return Status::InvalidArgument(fmt::format("job {}: {}", j, placed.status().message()));
      }
      p.placed = std::move(*placed);
    }
    nodes += static_cast<int>(job.pattern.nodes);
    ionodes += job.ionodes;
    ranks += job.pattern.ranks;
    files += job.pattern.ranks + 1;  // Pattern::File: 0 (shared) or rank + 1
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

Result<std::vector<JointJobResult>> RunJoint(const JointConfig& config) {
  auto prepared = Prepare(config);
  if (!prepared.ok()) return prepared.status();
  const std::vector<PreparedJob>& jobs = *prepared;
  RunConfig engine_config;
  engine_config.context_factory = config.context_factory;
  detail::EngineCommandLine cmd(engine_config);
  sg4::Engine engine(&cmd.argc, cmd.argv.data());

  const PreparedJob& last = jobs.back();
  const int nodes = last.node_base + static_cast<int>(last.pattern.spec.nodes);
  const int ionode_count = last.ionode_base + config.jobs.back().ionodes;
  const Hosts hosts = BuildStarNetwork(config.platform, nodes, ionode_count);
  StorageModel storage(config.platform.storage, hosts.storage, hosts.metadata, config.seed);
  std::vector<CpuPool> node_cpu, ionode_cpu;
  for (sg4::Host* pool : hosts.cpu_of_node) node_cpu.emplace_back(config.platform.cpu, pool);
  for (sg4::Host* pool : hosts.cpu_of_ionode) ionode_cpu.emplace_back(config.platform.cpu, pool);
  std::vector<std::unique_ptr<IoNode>> ionodes;
  for (int k = 0; k < ionode_count; ++k) {
    ionodes.push_back(std::make_unique<IoNode>(
        k, hosts.ionode_front[k], hosts.ionode_storage[k],
        detail::MakeScheduler(config.scheduler).value(), config.platform.ionode.slots,
        config.platform.ionode.request_overhead_ns, &storage, &ionode_cpu[k]));
    ionodes.back()->Start();
  }
  // The last rank of all jobs to finish ends the I/O nodes, so that the simulation ends.
  uint32_t running = last.rank_base + last.pattern.spec.ranks;
  const std::function<void()> finished = [&running, &ionodes] {
    if (--running > 0) return;
    for (const auto& io : ionodes) io->Stop();
  };
  std::mt19937_64 rng(config.seed);
  const int64_t jitter_ns = config.platform.compute.start_jitter_ns;
  std::vector<std::vector<RankResult>> ranks(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    const PreparedJob& job = jobs[j];
    ranks[j].resize(job.pattern.spec.ranks);
    for (uint32_t r = 0; r < job.pattern.spec.ranks; ++r) {
      const uint32_t local = job.pattern.NodeOf(r);
      const auto node = static_cast<size_t>(job.node_base) + local;
      RankTarget target;
      target.storage = &storage;
      target.cpu = &node_cpu[node];
      target.rank_base = job.rank_base;
      target.file_base = job.file_base;
      target.app = static_cast<uint32_t>(j);
      if (config.jobs[j].ionodes > 0) {
        const int k = job.ionode_base + job.placed.ionode_of[local];
        target.ionode = ionodes[k]->mailbox(job.placed.entry_of[local]);
      }
      const int64_t start_ns =
          jitter_ns > 0 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(jitter_ns + 1)) : 0;
      StartRank(job.pattern, r, hosts.compute[node], target,
                config.jobs[j].start_s + static_cast<double>(start_ns) * 1e-9, &ranks[j][r],
                &finished);
    }
  }
  engine.run();

  if (running != 0) {
    return Status::IOError(fmt::format(
        "the joint simulation stopped with {} ranks unfinished (a scheduler held requests "
        "forever?)",
        running));
  }
  std::vector<JointJobResult> out(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    out[j].start_s = config.jobs[j].start_s;
    for (const RankResult& r : ranks[j]) {
      out[j].requests += r.requests;
      out[j].bytes += r.bytes;
      out[j].errors += r.errors;
      out[j].end_s = std::max(out[j].end_s, r.end_s);
    }
  }
  return out;
}

nlohmann::json JointJson(const JointConfig& config, const std::vector<JointJobResult>& results) {
  nlohmann::json jobs = nlohmann::json::array();
  for (size_t j = 0; j < results.size(); ++j) {
    const PatternSpec& p = config.jobs[j].pattern;
    const JointJobResult& r = results[j];
    const double seconds = r.end_s - r.start_s;
    jobs.push_back({
        {"layout", LayoutName(p.layout)},
        {"spatiality", SpatialityName(p.spatiality)},
        {"operation", p.write ? "write" : "read"},
        {"odirect", p.odirect},
        {"request", units::FormatBytes(p.request_bytes)},
        {"ranks", p.ranks},
        {"nodes", p.nodes},
        {"ionodes", config.jobs[j].ionodes},
        {"start_s", r.start_s},
        {"end_s", r.end_s},
        {"requests", r.requests},
        {"bytes", r.bytes},
        {"errors", r.errors},
        {"bandwidth_MiBps",
         seconds > 0 ? static_cast<double>(r.bytes) / (1024.0 * 1024.0) / seconds : 0},
    });
  }
  return {{"platform", config.platform.name},
          {"network_model", kNetworkModel},
          {"scheduler", config.scheduler},
          {"placement", config.placement},
          {"seed", config.seed},
          {"jobs", jobs}};
}

namespace {

template <typename T>
Result<T> Field(const nlohmann::json& doc, const char* key, T fallback) {
  if (!doc.contains(key)) return fallback;
  try {
    return doc.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    return Status::InvalidArgument(fmt::format("joint run: {} has the wrong type", key));
  }
}

Result<uint64_t> Bytes(const nlohmann::json& doc, const char* key) {
  if (!doc.contains(key)) return uint64_t{0};
  if (doc.at(key).is_number_unsigned()) return doc.at(key).get<uint64_t>();
  if (!doc.at(key).is_string()) {
    return Status::InvalidArgument(fmt::format("joint run: {} is a size (\"1MiB\")", key));
  }
  return units::ParseBytes(doc.at(key).get<std::string>());
}

// The value a job's `what` names among the workload library's choices, or an error listing them.
template <typename E>
Result<E> Choose(const std::vector<std::pair<std::string, E>>& choices, const std::string& text,
                 const char* what) {
  std::string valid;
  for (const auto& [name, value] : choices) {
    if (name == text) return value;
    valid += (valid.empty() ? "" : ", ") + name;
  }
  return Status::InvalidArgument(
      fmt::format("joint run: unknown {} '{}' (valid: {})", what, text, valid));
}

Result<JointJob> ParseJob(const nlohmann::json& doc) {
  static const char* const kKeys[] = {"layout",  "spatiality", "operation",    "odirect",
                                      "request", "total",      "max_requests", "ranks",
                                      "nodes",   "ionodes",    "start"};
  for (const auto& [key, value] : doc.items()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      return Status::InvalidArgument(fmt::format("joint run: unknown job key {}", key));
    }
  }
  JointJob job;
  PatternSpec& p = job.pattern;
  auto layout_text = Field<std::string>(doc, "layout", "shared");
  if (!layout_text.ok()) return layout_text.status();
  auto layout = Choose(workload::LayoutChoices(), *layout_text, "layout");
  if (!layout.ok()) return layout.status();
  p.layout = *layout;
  auto spatiality_text = Field<std::string>(doc, "spatiality", "contiguous");
  if (!spatiality_text.ok()) return spatiality_text.status();
  auto spatiality = Choose(workload::SpatialityChoices(), *spatiality_text, "spatiality");
  if (!spatiality.ok()) return spatiality.status();
  p.spatiality = *spatiality;
  auto op = Field<std::string>(doc, "operation", "write");
  if (!op.ok()) return op.status();
  if (*op != "write" && *op != "read") {
    return Status::InvalidArgument("joint run: operation is write or read");
  }
  p.write = *op == "write";
  auto odirect = Field<bool>(doc, "odirect", false);
  auto request = Bytes(doc, "request");
  auto total = Bytes(doc, "total");
  auto max_requests = Field<uint64_t>(doc, "max_requests", 0);
  auto ranks = Field<uint32_t>(doc, "ranks", 1);
  auto nodes = Field<uint32_t>(doc, "nodes", 1);
  auto ionodes = Field<int>(doc, "ionodes", 0);
  for (const Status& s : {odirect.status(), request.status(), total.status(), max_requests.status(),
                          ranks.status(), nodes.status(), ionodes.status()}) {
    if (!s.ok()) return s;
  }
  p.odirect = *odirect;
  if (*request > 0) p.request_bytes = *request;
  p.total_bytes = *total;
  p.max_requests = *max_requests;
  p.ranks = *ranks;
  p.nodes = *nodes;
  job.ionodes = *ionodes;
  if (doc.contains("start")) {
    auto text = Field<std::string>(doc, "start", "0s");
    if (!text.ok()) return text.status();
    auto ns = units::ParseDurationNs(*text);
    if (!ns.ok()) return ns.status();
    job.start_s = static_cast<double>(*ns) * 1e-9;
  }
  return job;
}

}  // namespace

Result<JointConfig> ParseJointConfig(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("platform") || !doc.contains("jobs") ||
      !doc.at("jobs").is_array()) {
    return Status::InvalidArgument("joint run: an object with platform (a file) and jobs (a list)");
  }
  JointConfig config;
  for (const auto& j : doc.at("jobs")) {
    auto job = ParseJob(j);
    if (!job.ok()) return job.status();
    config.jobs.push_back(*job);
  }
  auto scheduler = Field<std::string>(doc, "scheduler", "fifo");
  auto placement = Field<std::string>(doc, "placement", "block");
  auto seed = Field<uint64_t>(doc, "seed", 1);
  for (const Status& s : {scheduler.status(), placement.status(), seed.status()}) {
    if (!s.ok()) return s;
  }
  config.scheduler = *scheduler;
  config.placement = *placement;
  config.seed = *seed;
  auto path = Field<std::string>(doc, "platform", "");
  if (!path.ok()) return path.status();
  auto platform = LoadPlatform(*path);
  if (!platform.ok()) return platform.status();
  config.platform = *platform;
  return config;
}

}  // namespace iorelay::sim
