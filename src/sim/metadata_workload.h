// mdtest's file phases as a simulated workload (mdtest -F -C -T -E -r -n N -w W -e W -u: each rank
// in its own directory, or all in one): every rank creates its N files (create, write W bytes,
// close), then stats each, then reads each (open, read W bytes, close), then removes each, with a
// barrier between phases as mdtest's ranks have. A metadata call goes to the metadata server
// through the rank's I/O node (which serves it outside the scheduler, as the daemon's sessions do)
// or directly; the W bytes are a data request like any other. A phase's rate is its files over the
// time from the barrier before it to the barrier after, as mdtest reports it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <simgrid/s4u/Barrier.hpp>
#include <simgrid/s4u/Host.hpp>

#include "sim/compute_node.h"

namespace iorelay::sim {

struct MdtestSpec {
  uint64_t files_per_rank = 0;    // 0: not an mdtest run
  uint64_t bytes = 0;             // written at create, read at read (mdtest -w and -e)
  bool shared_directory = false;  // every rank's files in one directory (mdtest without -u)
};

enum class MdtestPhase { kCreate, kStat, kRead, kRemove };
inline constexpr int kMdtestPhases = 4;
// mdtest's names for the phases' rates: "File creation", "File stat", "File read", "File removal".
const char* MdtestPhaseName(int phase);

// Each phase's start (after the barrier before it) and end (after the barrier that ends it), in
// simulated seconds.
struct MdtestTimes {
  std::array<double, kMdtestPhases> start_s{};
  std::array<double, kMdtestPhases> end_s{};
};

// Creates the actor of `rank` (one of the `barrier`'s ranks), starting at `start_s`; rank 0
// records the phases' times in `times`. Calls `finished` (in the actor) after the last phase.
// `spec`, `times`, `out` and `finished` must outlive the simulation.
void StartMdtestRank(const MdtestSpec& spec, uint32_t rank, simgrid::s4u::Host* host,
                     RankTarget target, double start_s, simgrid::s4u::BarrierPtr barrier,
                     MdtestTimes* times, RankResult* out, const std::function<void()>* finished);

}  // namespace iorelay::sim
