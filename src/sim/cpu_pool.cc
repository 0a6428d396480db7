#include "sim/cpu_pool.h"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Exec.hpp>

namespace iorelay::sim {

void CpuPool::ForwardRequest(uint64_t bytes) const {
  double ns = static_cast<double>(params_.forward_request_ns);
  if (params_.copy_Bps > 0) ns += static_cast<double>(bytes) / params_.copy_Bps * 1e9;
  Run(ns);
}

void CpuPool::Dispatch(uint64_t requests, uint64_t calls) const {
  Run(static_cast<double>(requests) * static_cast<double>(params_.ionode_request_ns) +
      static_cast<double>(calls) * static_cast<double>(params_.ionode_call_ns));
}

void CpuPool::Run(double ns) const {
  if (pool_ == nullptr || ns <= 0) return;
  // `ns` of one core is ns * speed / 1e9 flops of the pool's per-core speed.
  simgrid::s4u::this_actor::exec_init(ns * 1e-9 * pool_->get_speed())->set_host(pool_)->wait();
}

}  // namespace iorelay::sim
