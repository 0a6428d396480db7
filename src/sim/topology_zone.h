// A SimGrid network zone whose routes are the ones src/placement computes: one SimGrid host per
// compute node, one SimGrid link per directed topology link, and each route asked of the zone
// answered by Topology::Route at that moment. Nothing is stored per pair of nodes, so memory is
// the hosts and links alone, whatever the node count (a full route table for 49,152 nodes
// would hold 2.4 billion entries). SimGrid's own torus, fat-tree and dragonfly zones are not
// used: they order dimensions and break ring ties differently from Blue Gene/Q and from
// src/placement, and the simulator must route as the placement code measured.
#pragma once

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <string>
#include <vector>

#include "placement/topology.h"

namespace iorelay::sim {

// Bandwidth of the route from a host to itself (memory, not network): 100 GB/s.
inline constexpr double kLoopbackBps = 100e9;

// Every link of a topology gets the same bandwidth and latency (SI units).
struct LinkParams {
  double bandwidth_Bps = 1.25e9;  // 10 Gbit/s
  double latency_s = 1e-6;
};

class TopologyZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  // Makes the zone named `name` under `parent` with the topology's hosts ("NAME/n<id>", speed in
  // flop/s) and links ("NAME/<LinkName>"), and seals it. `topology` must outlive the zone; the
  // zone belongs to SimGrid's engine, which destroys it.
  static TopologyZone* Create(const std::string& name, simgrid::s4u::NetZone* parent,
                              const placement::Topology& topology, const LinkParams& links,
                              double host_speed_flops);

  simgrid::s4u::Host* host(placement::VertexId node) const { return hosts_[node]; }
  simgrid::s4u::Link* link(placement::LinkId link) const { return links_[link]; }
  const placement::Topology& topology() const { return topology_; }

 private:
  TopologyZone(const std::string& name, const placement::Topology& topology)
      : NetZoneImpl(name), topology_(topology) {}
  void get_local_route(const simgrid::kernel::routing::NetPoint* src,
                       const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override;

  const placement::Topology& topology_;
  std::vector<simgrid::s4u::Host*> hosts_;  // by node id (= the host's NetPoint id)
  std::vector<simgrid::s4u::Link*> links_;  // by topology link id
  simgrid::s4u::Link* loopback_ = nullptr;  // the route from a host to itself
  double latency_s_ = 0;
};

}  // namespace iorelay::sim
