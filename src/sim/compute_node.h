// Compute-node ranks: each rank is an actor on its node's host issuing the iorelay-bench pattern
// as independent I/O, its next request when the previous one completes (closed loop), either to
// its node's I/O node as a message or, with no I/O nodes, to the storage (straight, or through a
// storage gateway of the topology).
#pragma once

#include <cstdint>
#include <functional>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <vector>

#include "sim/cpu_pool.h"
#include "sim/io_request.h"
#include "sim/storage_model.h"
#include "sim/wear_out.h"
#include "sim/workload_pattern.h"

namespace iorelay::sim {

struct RankResult {
  uint64_t requests = 0;
  uint64_t bytes = 0;
  int errors = 0;
  double end_s = 0;  // simulated time of the last completion
};

struct RankTarget {
  simgrid::s4u::Mailbox* ionode = nullptr;  // null: direct access
  StorageModel* storage = nullptr;          // used for direct access
  WearOut* wear_out = nullptr;              // the pattern's wear-out (null: none)
  const CpuPool* cpu = nullptr;             // charges the rank's processor time per request
  // Direct access over a topology: the storage gateways' hosts in the topology and on the
  // storage side, the same length (null: direct access goes straight to the storage)
  const std::vector<simgrid::s4u::Host*>* gateway_front = nullptr;
  const std::vector<simgrid::s4u::Host*>* gateway_storage = nullptr;
  // Several jobs in one simulation (sim/joint_run.h): this job's first rank and file id in the
  // whole simulation's numbering, and its application index; 0 for a run of one job.
  uint32_t rank_base = 0;
  uint64_t file_base = 0;
  uint32_t app = 0;
};

// One call of `rank` at the metadata server about `file` in `directory`, through its I/O node
// (answered on `reply`) or directly (straight, or through a storage gateway); nothing without a
// metadata server.
void MetadataCall(uint32_t rank, MetadataOp op, simgrid::s4u::Host* host, const RankTarget& target,
                  simgrid::s4u::Mailbox* reply, uint64_t directory, uint64_t file);
// Request `r` (request `i` of its rank, answered on r.reply_to) through the rank's I/O node or
// directly, charging the rank's processor time; fills r.bytes_done and r.error.
void DataCall(IoRequest& r, uint64_t i, simgrid::s4u::Host* host, const RankTarget& target);

// Creates the actor of `rank`, starting at `start_s`; it calls `finished` (in the actor) after
// its last request. `pattern`, `out` and `finished` must outlive the simulation.
void StartRank(const Pattern& pattern, uint32_t rank, simgrid::s4u::Host* host, RankTarget target,
               double start_s, RankResult* out, const std::function<void()>* finished);

}  // namespace iorelay::sim
