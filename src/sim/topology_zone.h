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
#include <utility>
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
  // Node pairs that exchange messages, either way.
  using Pairs = std::vector<std::pair<placement::VertexId, placement::VertexId>>;

  // Makes the zone named `name` under `parent` with the topology's hosts ("NAME/n<id>", speed in
  // flop/s) and links ("NAME/<LinkName>"), and seals it. With `talking`, only the links on the
  // routes between those pairs (both ways) are made: a run's messages go between a few known
  // pairs, and SimGrid's cost of making a link (a name lookup each) is most of the time of a
  // short run on a large machine (a 13,056-node dragonfly has 340,000 links). Asking a route
  // between other nodes is then a fatal error. `topology` must outlive the zone; the zone
  // belongs to SimGrid's engine, which destroys it.
  static TopologyZone* Create(const std::string& name, simgrid::s4u::NetZone* parent,
                              const placement::Topology& topology, const LinkParams& links,
                              double host_speed_flops, const Pairs* talking = nullptr);

  simgrid::s4u::Host* host(placement::VertexId node) const { return hosts_[node]; }
  // Null for a link no talking pair's route crosses.
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
  std::vector<simgrid::s4u::Link*> links_;  // by topology link id (null: not made)
  simgrid::s4u::Link* loopback_ = nullptr;  // the route from a host to itself
  double latency_s_ = 0;
};

}  // namespace iorelay::sim
