// Collective (two-phase) and independent MPI-IO writes and reads of one shared striped file on a
// simulated machine: src/collective chooses and places the aggregators and plans each collective
// call's cycles; here each cycle's exchange crosses the network model to the aggregators, which
// then write their ranges to the storage targets through a client with RPCs in flight (Lustre's
// write-back: max_rpcs_in_flight RPCs of max_pages_per_rpc); a read is the mirror, the
// aggregators' reads first, then the exchange back to the ranks. Independent I/O: each rank moves
// its own pieces through such a client. One run per process (SimGrid), as sim::Run.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collective/ompio_cycles.h"
#include "common/status.h"
#include "sim/platform.h"

namespace iorelay::sim {

// Whose collective plan. ROMIO's two-phase I/O (collective::PlanTwoPhase): the aggregators' file
// domains, one cb_buffer_size window after another, each cycle's exchange done before its
// writes and its writes before the next exchange. OMPIO's (collective::PlanOmpio): groups of
// consecutive ranks, the first of each aggregating; its fcoll components (vulcan, dynamic_gen2)
// keep two cycle buffers, so with asynchronous writes a write's exchange for cycle c + 1 runs
// while cycle c is written (OmpioAsync).
enum class CollectivePlan { kRomio, kOmpio };

// Whether OMPIO writes a cycle asynchronously, overlapping the next cycle's exchange (vulcan's
// MCA fcoll_vulcan_async_io): always (1), never (2), or by its default rule (0) when a call
// has more than 2 cycles (the file system's module, as POSIX's, can write asynchronously).
enum class OmpioAsync { kAuto, kOn, kOff };

// IOR's shared-file pattern with -c: in call c, rank r writes bytes_per_rank contiguous bytes at
// (c * ranks + r) * bytes_per_rank. Ranks are placed in blocks of ranks_per_node per node.
struct CollectiveSpec {
  uint32_t nodes = 1;
  uint32_t ranks_per_node = 1;
  uint64_t bytes_per_rank = 1 << 20;
  uint32_t calls = 1;
  bool collective = true;  // false: independent I/O (each rank writes its own pieces)
  bool write = true;       // false: read the file (as the write left it)
  // The aggregators (collective only): cb_nodes (0: the default rule of
  // collective::AggregatorCount, one per node), at most max_per_node per node
  // (cb_config_list "*:M"), spread over the nodes (collective::SpreadAggregators) or packed
  // (collective::PackAggregators).
  int32_t cb_nodes = 0;
  int32_t max_per_node = 1;
  // Without cb_nodes, with k: Chaarawi & Gabriel's count, ceil(call bytes / k) (0: not used).
  uint64_t saturation_point_bytes = 0;
  bool packed = false;
  uint64_t cb_buffer_bytes = 16 << 20;  // ROMIO's default cb_buffer_size
  // OMPIO's plan instead (collective only): cb_buffer_bytes is then each group's cycle (half of
  // io_ompio_bytes_per_agg), taken in static or dynamic segmentation; the groups come from
  // split/merge around saturation_point_bytes without cb_nodes, else cb_nodes groups
  // (io_ompio_num_aggregators), else one per node. Its aggregators cannot be packed.
  CollectivePlan plan = CollectivePlan::kRomio;
  collective::Segmentation segmentation = collective::Segmentation::kDynamic;
  OmpioAsync ompio_async = OmpioAsync::kAuto;
  // The file's layout (lfs setstripe -c -S): 1 <= stripe_count <= the platform's targets.
  int32_t stripe_count = 1;
  uint64_t stripe_bytes = 1 << 20;
  // Each writing process's file-system client: RPCs of rpc_bytes, at most rpcs_in_flight at once
  // (Lustre's defaults, 1 MiB and 8).
  uint64_t rpc_bytes = 1 << 20;
  int32_t rpcs_in_flight = 8;
  uint64_t seed = 1;
  std::string context_factory;  // as RunConfig's ("thread" under sanitizers)

  uint32_t Ranks() const { return nodes * ranks_per_node; }
  uint64_t TotalBytes() const { return uint64_t{Ranks()} * bytes_per_rank * calls; }
};

struct CollectiveResult {
  std::vector<int32_t> aggregators;  // ranks, in file-domain order (collective only)
  std::vector<std::string> reasons;  // how their count was reached
  uint64_t bytes = 0;                // written (or read) by the storage
  uint64_t exchanged_bytes = 0;      // crossed the network in exchanges (node to another node)
  uint64_t cycles = 0;               // exchange-and-write rounds, all calls (with OMPIO's
                                     // asynchronous writes a round's exchange overlaps the last
                                     // one's writes)
  uint64_t overlapped_calls = 0;     // calls whose cycles overlapped so (OMPIO's plan)
  uint64_t storage_calls = 0;        // RPCs
  double simulated_s = 0;  // from the file's create (open) to the last RPC's (exchange's) end
  double wall_s = 0;
};

// InvalidArgument naming the field (and the platform's limit) for impossible specs: no nodes or
// ranks, a stripe count above the platform's targets, a packing the nodes cannot hold, ...
Status ValidateCollective(const Platform& platform, const CollectiveSpec& spec);
Result<CollectiveResult> RunCollective(const Platform& platform, const CollectiveSpec& spec);

// The spec and the numbers: bandwidth in MiB/s and MB/s, the aggregators, the exchange.
nlohmann::json CollectiveJson(const Platform& platform, const CollectiveSpec& spec,
                              const CollectiveResult& result);

}  // namespace iorelay::sim
