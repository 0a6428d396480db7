// The simulated machine's hosts and links on SimGrid, built in code from a Platform. Two forms:
//  - star: compute nodes, I/O nodes and storage servers in one star zone, each host's NIC a
//    split-duplex link to one switch, optionally behind a shared backbone link;
//  - topology (platform network.topology with network.link): the compute nodes are the hosts of a
//    TopologyZone routed by src/placement (torus, fat tree, dragonfly); each I/O node receives
//    requests at its bridge nodes' hosts there (one, or Blue Gene/Q's two) and reaches the
//    storage from another host, its storage side, in a star zone with the storage servers.
//    Direct access does the same through the storage gateways (network.storage_gateways): a
//    request crosses the topology to a gateway's node and goes on from the gateway's storage
//    side, store and forward, as an LNET router forwards a Lustre RPC. No route crosses the two
//    zones.
#pragma once

#include <memory>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <utility>
#include <vector>

#include "placement/topology.h"
#include "sim/platform.h"

namespace iorelay::sim {

struct Hosts {
  std::vector<simgrid::s4u::Host*> compute;  // by compute node
  // I/O node → the hosts its requests arrive at and its replies leave from (its bridge nodes')
  std::vector<std::vector<simgrid::s4u::Host*>> ionode_front;
  std::vector<simgrid::s4u::Host*> ionode_storage;  // where its storage calls leave from
  // I/O node → by front, the host at the far end of that bridge's link (ionode.bridge_link;
  // empty without): data cross it to and from ionode_storage
  std::vector<std::vector<simgrid::s4u::Host*>> ionode_bridge;
  // Storage gateway → the host of its node in the topology, and its host on the storage side
  std::vector<simgrid::s4u::Host*> gateway_front;
  std::vector<simgrid::s4u::Host*> gateway_storage;
  std::vector<simgrid::s4u::Host*> storage;  // "st<j>", one per data target
  // "mds", "mds1", ... (storage.metadata_servers), with storage.metadata_service
  std::vector<simgrid::s4u::Host*> metadata;
  // The cores each compute node's and each I/O node's charges run on, with cpu.cores (null:
  // free): all the one host "cpu" (scope machine), or "cpu<i>" and "iocpu<k>" (scope node).
  // They run executions only, so they have no links.
  std::vector<simgrid::s4u::Host*> cpu_of_node;
  std::vector<simgrid::s4u::Host*> cpu_of_ionode;
};

// Star form. Call once, after the engine exists and before it runs.
Hosts BuildStarNetwork(const Platform& platform, int compute_nodes, int ionodes);

// Topology form: `topology` (which must outlive the engine) has at least `compute_nodes` nodes;
// I/O node k's fronts are the hosts of compute nodes bridges[k]; storage gateway g sits at node
// gateways[g]. Only the routes between the `talking` pairs of nodes exist (TopologyZone).
Hosts BuildTopologyNetwork(const Platform& platform, const placement::Topology& topology,
                           int compute_nodes, const std::vector<std::vector<int32_t>>& bridges,
                           const std::vector<int32_t>& gateways,
                           const std::vector<std::pair<int32_t, int32_t>>& talking);

}  // namespace iorelay::sim
