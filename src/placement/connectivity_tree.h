// Connectivity trees: the compute nodes whose default route to a bridge node runs through
// each other, grown breadth-first from the bridge. The route-aware policy is built on them.
#pragma once

#include <vector>

#include "placement/topology.h"

namespace iorelay::placement {

struct ConnectivityTree {
  VertexId root = -1;
  std::vector<VertexId> nodes;  // compute nodes, breadth-first, so depth never decreases
  std::vector<int> depth;       // hops from each node to root along its default route
};

// Breadth-first search from root over the topology's neighbours: vertex v becomes a child of u
// only if NextHop(v, root) == u, i.e. v's default route to root passes exactly through u and
// then follows u's own route. Switches (fat tree) are traversed but not counted. Stops once
// `cap` compute nodes (root included) are in the tree. Each vertex has one next hop, so it is
// found at most once: cost O(visited vertices * degree) NextHop calls, no N-sized state.
// `queue` and `neighbors` are scratch space reused across calls.
void BuildConnectivityTree(const Topology& topology, VertexId root, int cap, ConnectivityTree* tree,
                           std::vector<VertexId>* queue, std::vector<VertexId>* neighbors);

}  // namespace iorelay::placement
