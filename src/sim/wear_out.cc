#include "sim/wear_out.h"

#include <algorithm>

namespace iorelay::sim {

WearOut::WearOut(unsigned participants) : barrier_(simgrid::s4u::Barrier::create(participants)) {}

uint64_t WearOut::Agree(uint64_t issued) {
  largest_ = std::max(largest_, issued);
  barrier_->wait();
  return largest_;
}

}  // namespace iorelay::sim
