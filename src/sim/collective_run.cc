// A collective write cycle by cycle: the exchange (one flow per pair of nodes, started together,
// all finished before the writes, as ROMIO's every rank takes part in every cycle), then each
// aggregator's writes of its window through its client; with OMPIO's plan the next cycle's
// exchange runs during those writes (two buffers). Independent I/O has no exchange.
#include "sim/collective_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include "collective/aggregators.h"
#include "collective/ompio_cycles.h"
#include "collective/split_merge.h"
#include "collective/two_phase.h"
#include "common/units.h"
#include "sim/network.h"
#include "sim/simulation.h"
#include "sim/storage_model.h"

namespace iorelay::sim {

namespace sg4 = simgrid::s4u;
using collective::FileDomain;

namespace {

constexpr uint64_t kFile = 0;  // the one shared file

// The rules of src/collective on this job: the count, then the ranks.
Result<collective::AggregatorChoice> Choose(const CollectiveSpec& spec) {
  collective::JobShape job;
  job.ranks = static_cast<int32_t>(spec.Ranks());
  job.ranks_per_node = static_cast<int32_t>(spec.ranks_per_node);
  job.stripe_count = spec.stripe_count;
  job.stripe_size_bytes = spec.stripe_bytes;
  job.cb_nodes = spec.cb_nodes;
  job.max_per_node = spec.max_per_node;
  job.saturation_point_bytes = spec.saturation_point_bytes;
  if (spec.saturation_point_bytes > 0) {
    job.bytes_per_collective = uint64_t{spec.Ranks()} * spec.bytes_per_rank;
  }
  collective::AggregatorChoice choice;
  auto count = collective::AggregatorCount(job, &choice.reasons);
  if (!count.ok()) return count.status();
  choice.ranks = spec.packed ? collective::PackAggregators(job, *count)
                             : collective::SpreadAggregators(job, *count);
  if (choice.ranks.empty()) {
    return Status::InvalidArgument(
        fmt::format("cannot pack {} aggregators on {} nodes of {} ranks with at most {} per node "
                    "(max_per_node)",
                    *count, spec.nodes, spec.ranks_per_node, spec.max_per_node));
  }
  if (spec.packed)
    choice.reasons.push_back("packed: node after node, " + std::to_string(spec.max_per_node) +
                             " per node");
  return choice;
}

// Call c's pieces: rank r's bytes_per_rank at (c * ranks + r) * bytes_per_rank.
std::vector<collective::RankExtent> CallExtents(const CollectiveSpec& spec, uint32_t c) {
  std::vector<collective::RankExtent> extents;
  const uint32_t ranks = spec.Ranks();
  for (uint32_t r = 0; r < ranks; ++r) {
    extents.push_back({static_cast<int32_t>(r), (uint64_t{c} * ranks + r) * spec.bytes_per_rank,
                       spec.bytes_per_rank});
  }
  return extents;
}

// OMPIO's groups for one call's `extents`: split/merge around k without cb_nodes; else cb_nodes
// (io_ompio_num_aggregators), or one per node, groups of consecutive ranks as even as possible.
// `reasons` (when given) says which.
Result<std::vector<collective::RankGroup>> OmpioGroups(
    const CollectiveSpec& spec, const std::vector<collective::RankExtent>& extents,
    std::vector<std::string>* reasons) {
  if (spec.cb_nodes == 0 && spec.saturation_point_bytes > 0) {
    auto groups = collective::SplitMerge(extents, spec.saturation_point_bytes);
    if (groups.ok() && reasons != nullptr) {
      reasons->push_back(
          fmt::format("OMPIO: split/merge around k = {}: {} group(s), the first "
                      "rank of each aggregating",
                      units::FormatBytes(spec.saturation_point_bytes), groups->size()));
    }
    return groups;
  }
  const uint32_t ranks = spec.Ranks();
  // More groups than ranks are capped at one rank each, as the MPIs cap cb_nodes.
  const uint32_t count =
      std::min(ranks, spec.cb_nodes > 0 ? static_cast<uint32_t>(spec.cb_nodes) : spec.nodes);
  std::vector<collective::RankGroup> groups(count);
  for (const collective::RankExtent& e : extents) {
    collective::RankGroup& g = groups[uint64_t{static_cast<uint32_t>(e.rank)} * count / ranks];
    g.ranks.push_back(e.rank);
    g.bytes += e.bytes;
  }
  if (reasons != nullptr) {
    reasons->push_back(
        fmt::format("OMPIO: {} group(s) of consecutive ranks ({}), the first "
                    "rank of each aggregating",
                    count, spec.cb_nodes > 0 ? "io_ompio_num_aggregators" : "one per node"));
  }
  return groups;
}

// Each call's plan, with the aggregators and the reasons for their count in `out`. ROMIO: the
// ranks' pieces of the call in domains of the Lustre rule on a parallel file system (ROMIO's
// Lustre driver), even domains on NFS. OMPIO: its groups' cycles.
Result<std::vector<std::vector<collective::Cycle>>> Plans(const Platform& platform,
                                                          const CollectiveSpec& spec,
                                                          CollectiveResult* out) {
  std::vector<std::vector<collective::Cycle>> plans;
  if (spec.plan == CollectivePlan::kOmpio) {
    const collective::OmpioSpec ompio{spec.cb_buffer_bytes, spec.segmentation};
    // Every call has the first one's shape, so the first one's groups and aggregators.
    auto groups = OmpioGroups(spec, CallExtents(spec, 0), &out->reasons);
    if (!groups.ok()) return groups.status();
    out->aggregators = collective::GroupAggregators(*groups);
    for (uint32_t c = 0; c < spec.calls; ++c) {
      auto plan = collective::PlanOmpio(CallExtents(spec, c), *groups, ompio);
      if (!plan.ok()) return plan.status();
      plans.push_back(std::move(*plan));
    }
    return plans;
  }
  auto choice = Choose(spec);
  if (!choice.ok()) return choice.status();
  out->aggregators = choice->ranks;
  out->reasons = choice->reasons;
  collective::TwoPhaseSpec two;
  two.aggregators = static_cast<int32_t>(out->aggregators.size());
  two.stripe_size_bytes = platform.storage.kind == StorageKind::kPfs ? spec.stripe_bytes : 0;
  two.cb_buffer_bytes = spec.cb_buffer_bytes;
  for (uint32_t c = 0; c < spec.calls; ++c) {
    auto plan = collective::PlanTwoPhase(CallExtents(spec, c), two);
    if (!plan.ok()) return plan.status();
    plans.push_back(std::move(*plan));
  }
  return plans;
}

// `ranges` cut into RPCs at multiples of rpc_bytes in the file.
std::vector<FileDomain> Rpcs(const std::vector<FileDomain>& ranges, uint64_t rpc_bytes) {
  std::vector<FileDomain> out;
  for (const FileDomain& r : ranges) {
    for (uint64_t at = r.begin; at < r.end;) {
      const uint64_t end = std::min(r.end, (at / rpc_bytes + 1) * rpc_bytes);
      out.push_back({at, end});
      at = end;
    }
  }
  return out;
}

// A process's file-system client writing (or reading) `ranges` from `host`: at most
// rpcs_in_flight RPCs at once (an actor each, taking the next RPC in file order), returning when
// the last is done. A write's data leave one RPC after another in file order, as over one
// connection, so a target receives a client's RPCs in order (no seek between them); the RPCs in
// flight overlap one's service with the next ones' transfers. Reads reach the targets in the
// order the RPCs start, which is file order.
void ClientIo(StorageModel* storage, sg4::Host* host, const std::vector<FileDomain>& ranges,
              const CollectiveSpec& spec, uint64_t* calls) {
  struct Client {
    std::vector<FileDomain> rpcs;
    size_t next = 0;  // the next RPC a worker takes
    size_t sent = 0;  // RPCs whose data have left
    sg4::MutexPtr mutex = sg4::Mutex::create();
    sg4::ConditionVariablePtr turn = sg4::ConditionVariable::create();
  };
  auto client = std::make_shared<Client>();
  client->rpcs = Rpcs(ranges, spec.rpc_bytes);
  std::vector<sg4::ActorPtr> workers;
  const size_t n = std::min(static_cast<size_t>(spec.rpcs_in_flight), client->rpcs.size());
  for (size_t w = 0; w < n; ++w) {
    const bool write = spec.write;
    workers.push_back(sg4::Actor::create("rpc", host, [storage, host, client, calls, write] {
      while (client->next < client->rpcs.size()) {
        const size_t i = client->next++;
        const FileDomain r = client->rpcs[i];
        const std::function<void()> my_turn = [&] {
          std::unique_lock lock(*client->mutex);
          client->turn->wait(lock, [&] { return client->sent == i; });
        };
        const std::function<void()> sent = [&] {
          std::unique_lock lock(*client->mutex);
          ++client->sent;
          client->turn->notify_all();
        };
        if (write) {
          storage->Call(host, kFile, true, r.begin, r.end - r.begin, nullptr, &my_turn, &sent);
        } else {
          storage->Call(host, kFile, false, r.begin, r.end - r.begin);
        }
        ++*calls;
      }
    }));
  }
  for (const sg4::ActorPtr& w : workers) w->join();
}

// One cycle's exchange: the bytes each node sends each other node, as one flow per pair, all
// started together (a read's go the other way, from the aggregators to the ranks); bytes
// staying on a node (shared memory) cost nothing.
uint64_t Exchange(const collective::Cycle& cycle, const std::vector<int32_t>& aggregators,
                  const CollectiveSpec& spec, const std::vector<sg4::Host*>& compute) {
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> by_pair;
  for (const collective::Flow& f : cycle.flows) {
    const uint32_t from = static_cast<uint32_t>(f.rank) / spec.ranks_per_node;
    const uint32_t to = static_cast<uint32_t>(aggregators[f.aggregator]) / spec.ranks_per_node;
    if (from == to) continue;
    by_pair[spec.write ? std::pair{from, to} : std::pair{to, from}] += f.bytes;
  }
  std::vector<sg4::CommPtr> comms;
  uint64_t moved = 0;
  for (const auto& [pair, bytes] : by_pair) {
    comms.push_back(sg4::Comm::sendto_async(compute[pair.first], compute[pair.second], bytes));
    moved += bytes;
  }
  sg4::Comm::wait_all(comms);
  return moved;
}

}  // namespace

Status ValidateCollective(const Platform& platform, const CollectiveSpec& spec) {
  const auto bad = [](const std::string& what) { return Status::InvalidArgument(what); };
  if (spec.nodes < 1) return bad("nodes must be >= 1");
  if (spec.ranks_per_node < 1) return bad("ranks_per_node must be >= 1");
  if (spec.bytes_per_rank < 1) return bad("bytes_per_rank must be >= 1");
  if (spec.calls < 1) return bad("calls must be >= 1");
  if (spec.cb_buffer_bytes < 1) return bad("cb_buffer_size must be >= 1 byte");
  if (spec.rpc_bytes < 1) return bad("rpc_bytes must be >= 1");
  if (spec.rpcs_in_flight < 1) return bad("rpcs_in_flight must be >= 1");
  if (spec.cb_nodes < 0) return bad("cb_nodes must be >= 0 (0: the default rule)");
  if (spec.max_per_node < 1) return bad("max_per_node (cb_config_list *:M) must be >= 1");
  if (spec.stripe_bytes < 1) return bad("stripe size must be >= 1 byte");
  const int targets = platform.storage.targets;
  if (spec.stripe_count < 1 || spec.stripe_count > targets) {
    return bad(fmt::format(
        "stripe count {} is outside the platform's storage targets: 1 to {} ('{}' has {} "
        "storage.targets; lfs setstripe -c cannot ask for more)",
        spec.stripe_count, targets, platform.name, targets));
  }
  if (spec.plan == CollectivePlan::kRomio &&
      spec.segmentation != collective::Segmentation::kDynamic) {
    return bad("segmentation (static or dynamic) is OMPIO's: it needs the ompio plan");
  }
  if (spec.plan == CollectivePlan::kRomio && spec.ompio_async != OmpioAsync::kAuto) {
    return bad("ompio_async (fcoll_vulcan_async_io) is OMPIO's: it needs the ompio plan");
  }
  if (!spec.collective) {
    if (spec.plan == CollectivePlan::kOmpio) {
      return bad("the ompio plan is a collective write's: independent I/O has no plan");
    }
    if (spec.cb_nodes != 0 || spec.packed || spec.max_per_node != 1 ||
        spec.saturation_point_bytes != 0) {
      return bad(
          "cb_nodes, packed, max_per_node and the saturation point choose aggregators: "
          "independent I/O has none");
    }
    return Status::Ok();
  }
  if (spec.plan == CollectivePlan::kOmpio) {
    if (spec.packed || spec.max_per_node != 1) {
      return bad(
          "packed aggregators and max_per_node (cb_config_list) are ROMIO's: OMPIO's "
          "aggregators are its groups' first ranks");
    }
    return OmpioGroups(spec, CallExtents(spec, 0), nullptr).status();
  }
  return Choose(spec).status();
}

Result<CollectiveResult> RunCollective(const Platform& platform, const CollectiveSpec& spec) {
  const auto wall_start = std::chrono::steady_clock::now();
  IORELAY_RETURN_IF_ERROR(ValidateCollective(platform, spec));
  CollectiveResult out;
  std::vector<std::vector<collective::Cycle>> plans;
  if (spec.collective) {
    auto planned = Plans(platform, spec, &out);
    if (!planned.ok()) return planned.status();
    plans = std::move(*planned);
  }

  RunConfig engine_config;
  engine_config.context_factory = spec.context_factory;
  detail::EngineCommandLine cmd(engine_config);
  sg4::Engine engine(&cmd.argc, cmd.argv.data());
  const Hosts hosts = BuildStarNetwork(platform, static_cast<int>(spec.nodes), 0);
  StorageModel storage(platform.storage, hosts.storage, hosts.metadata, spec.seed);
  storage.SetLayout(kFile, spec.stripe_count, spec.stripe_bytes);
  const auto host_of = [&](uint32_t rank) { return hosts.compute[rank / spec.ranks_per_node]; };

  sg4::Actor::create("job", hosts.compute[0], [&] {
    storage.Metadata(hosts.compute[0], nullptr,
                     spec.write ? MetadataOp::kCreate : MetadataOp::kOpen, /*directory=*/0, kFile);
    std::vector<sg4::ActorPtr> writers;
    const auto join_writers = [&] {
      for (const sg4::ActorPtr& a : writers) a->join();
      writers.clear();
    };
    if (spec.collective) {
      for (const auto& plan : plans) {
        // OMPIO's two buffers: a cycle's exchange while the previous cycle's writes run.
        const bool overlap = spec.write && spec.plan == CollectivePlan::kOmpio &&
                             (spec.ompio_async == OmpioAsync::kOn ||
                              (spec.ompio_async == OmpioAsync::kAuto && plan.size() > 2));
        out.overlapped_calls += overlap ? 1 : 0;
        for (const collective::Cycle& cycle : plan) {
          // A write exchanges, then writes; a read reads, then exchanges.
          if (spec.write) {
            out.exchanged_bytes += Exchange(cycle, out.aggregators, spec, hosts.compute);
          }
          join_writers();  // one cycle's writes at a time
          for (const collective::AggregatorWrite& w : cycle.writes) {
            sg4::Host* host = host_of(static_cast<uint32_t>(out.aggregators[w.aggregator]));
            writers.push_back(sg4::Actor::create("aggregator", host, [&, host, w] {
              ClientIo(&storage, host, w.ranges, spec, &out.storage_calls);
            }));
          }
          if (!overlap) join_writers();
          if (!spec.write) {
            out.exchanged_bytes += Exchange(cycle, out.aggregators, spec, hosts.compute);
          }
          ++out.cycles;
        }
        join_writers();  // the call returns once its last writes are done
      }
    } else {
      for (uint32_t r = 0; r < spec.Ranks(); ++r) {
        writers.push_back(sg4::Actor::create("rank" + std::to_string(r), host_of(r), [&, r] {
          for (uint32_t c = 0; c < spec.calls; ++c) {
            const uint64_t at = (uint64_t{c} * spec.Ranks() + r) * spec.bytes_per_rank;
            ClientIo(&storage, host_of(r), {{at, at + spec.bytes_per_rank}}, spec,
                     &out.storage_calls);
          }
        }));
      }
      for (const sg4::ActorPtr& a : writers) a->join();
    }
    out.simulated_s = sg4::Engine::get_clock();
  });
  engine.run();
  out.bytes = spec.write ? storage.bytes_written() : storage.bytes_read();
  if (out.bytes != spec.TotalBytes()) {
    return Status::IOError(
        fmt::format("the simulation moved {} of {} bytes", out.bytes, spec.TotalBytes()));
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

nlohmann::json CollectiveJson(const Platform& platform, const CollectiveSpec& spec,
                              const CollectiveResult& r) {
  const double bytes = static_cast<double>(r.bytes);
  nlohmann::json j = {
      {"platform", platform.name},
      {"network_model", kNetworkModel},
      {"mode", spec.collective ? "collective" : "independent"},
      {"operation", spec.write ? "write" : "read"},
      {"nodes", spec.nodes},
      {"ranks_per_node", spec.ranks_per_node},
      {"bytes_per_rank", units::FormatBytes(spec.bytes_per_rank)},
      {"calls", spec.calls},
      {"stripe_count", spec.stripe_count},
      {"stripe_size", units::FormatBytes(spec.stripe_bytes)},
      {"rpc", units::FormatBytes(spec.rpc_bytes)},
      {"rpcs_in_flight", spec.rpcs_in_flight},
      {"bytes", r.bytes},
      {"storage_calls", r.storage_calls},
      {"simulated_time_s", r.simulated_s},
      {"bandwidth_MiBps", r.simulated_s > 0 ? bytes / (1 << 20) / r.simulated_s : 0},
      {"bandwidth_MBps", r.simulated_s > 0 ? bytes / 1e6 / r.simulated_s : 0},
      {"wall_time_s", r.wall_s},
  };
  if (spec.collective) {
    j["aggregators"] = r.aggregators;
    j["aggregator_count"] = r.aggregators.size();
    const bool ompio = spec.plan == CollectivePlan::kOmpio;
    j["plan"] = ompio ? "ompio" : "romio";
    if (ompio) {
      j["segmentation"] =
          spec.segmentation == collective::Segmentation::kStatic ? "static" : "dynamic";
      j["ompio_async"] = spec.ompio_async == OmpioAsync::kOn    ? "on"
                         : spec.ompio_async == OmpioAsync::kOff ? "off"
                                                                : "auto";
      j["overlapped_calls"] = r.overlapped_calls;
    } else {
      j["placement"] = spec.packed ? "packed" : "spread";
      j["max_per_node"] = spec.max_per_node;
    }
    if (spec.saturation_point_bytes > 0) {
      j["saturation_point"] = units::FormatBytes(spec.saturation_point_bytes);
    }
    j["cb_buffer_size"] = units::FormatBytes(spec.cb_buffer_bytes);
    j["reasons"] = r.reasons;
    j["cycles"] = r.cycles;
    j["exchanged_bytes"] = r.exchanged_bytes;
  }
  return j;
}

}  // namespace iorelay::sim
