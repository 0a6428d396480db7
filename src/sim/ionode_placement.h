// Which I/O node serves each compute node, and at which of its bridge nodes the node's requests
// enter, by a src/placement layout and policy.
//  - spread layout: one bridge node per I/O node, spread evenly over the job's nodes;
//  - bgq layout (Blue Gene/Q, docs/placement.md): the job fills a torus of whole midplanes, 8
//    bridge nodes per midplane, 2 per I/O node, 1 I/O node per 128 compute nodes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/platform.h"

namespace iorelay::sim {

// network.topology's name for "the Mira partition shape for --nodes" (docs/placement.md).
inline constexpr const char* kMiraPartitionTopology = "mira-partition";

struct IoNodePlacement {
  std::string topology;                       // the topology spec the placement used
  std::vector<int32_t> ionode_of;             // compute node → I/O node [0, ionodes)
  std::vector<int32_t> entry_of;              // compute node → index into its I/O node's bridges
  std::vector<std::vector<int32_t>> bridges;  // I/O node → the compute nodes it attaches at
};

// The topology spec a run uses: `spec`, fattree:1x<nodes>x1 (one switch) when empty, or the
// Mira partition torus of `nodes` for kMiraPartitionTopology. InvalidArgument for a node count
// that is not a Mira partition size.
Result<std::string> ResolveTopology(const std::string& spec, int32_t nodes);

// InvalidArgument for an unknown policy or topology, a topology with fewer than `nodes` nodes,
// more I/O nodes than nodes, and for the bgq layout a topology that is not a torus of whole
// midplanes of exactly `nodes` nodes or an I/O node count other than nodes / 128.
Result<IoNodePlacement> PlaceIoNodes(const std::string& topology_spec, IoLayoutKind layout,
                                     const std::string& policy, int32_t nodes, int32_t ionodes);

// Where direct access reaches the storage on a topology (network.storage_gateways): the
// gateways' nodes, spread evenly over the topology's nodes the job does not use (nodes
// [nodes, M) of a topology of M nodes, as a machine's router nodes sit among other jobs' nodes),
// or over all M nodes when fewer than `gateways` are left. InvalidArgument for a topology with
// fewer than `nodes` nodes or more gateways than nodes.
struct GatewayPlacement {
  std::string topology;        // the topology spec used
  std::vector<int32_t> nodes;  // gateway → its node of the topology
};
Result<GatewayPlacement> PlaceStorageGateways(const std::string& topology_spec, int32_t nodes,
                                              int32_t gateways);

}  // namespace iorelay::sim
