// The bench's --wearout in simulated time: once every rank is past the stonewall (or done), the
// ranks agree on the largest request count any of them reached, and each then issues requests
// up to that count without looking at the clock (tools/iorelay-bench/phase.h: an MPI_Allreduce
// there).
#pragma once

#include <cstdint>
#include <simgrid/s4u/Barrier.hpp>

namespace iorelay::sim {

class WearOut {
 public:
  // `participants`: the actors that each call Agree once (one per rank, or one per node
  // issuing its ranks' requests).
  explicit WearOut(unsigned participants);

  // Blocks the calling actor until every participant has called it; returns the largest
  // `issued` among them. (SimGrid runs one actor at a time, so the maximum needs no lock.)
  uint64_t Agree(uint64_t issued);

 private:
  simgrid::s4u::BarrierPtr barrier_;
  uint64_t largest_ = 0;
};

}  // namespace iorelay::sim
