// The processor time a request costs, on a pool of cores. With the platform's cpu scope
// `machine`, one pool that every process of the machine shares: the ranks, the I/O nodes'
// daemons and the file system's calls. This is this machine (2 cores), or a testbed of network
// namespaces on it, where forwarding pays in CPU what it saves at the disk. With scope `node`, a
// pool per compute node (its ranks share it) and per I/O node, as on a cluster.
#pragma once

#include <cstdint>
#include <simgrid/s4u/Host.hpp>

#include "sim/platform.h"

namespace iorelay::sim {

class CpuPool {
 public:
  // `pool` is the host whose cores the charges run on (null when params.cores is 0: every
  // charge is free).
  CpuPool(const CpuParams& params, simgrid::s4u::Host* pool) : params_(params), pool_(pool) {}

  // A rank's own file-system call (direct access).
  void DirectCall() const { Run(params_.direct_call_ns); }
  // The client library's part of one forwarded request moving `bytes` of data (one copy).
  void ForwardRequest(uint64_t bytes) const;
  // The I/O node's part of a dispatch: `requests` received and answered, `calls` file-system
  // calls made.
  void Dispatch(uint64_t requests, uint64_t calls) const;

 private:
  // Runs `ns` of one core's time in the calling actor on the pool, sharing its cores max-min
  // with every other charge in progress (SimGrid's CPU model).
  void Run(double ns) const;

  CpuParams params_;
  simgrid::s4u::Host* pool_;
};

}  // namespace iorelay::sim
