// Breadth-first construction of a bridge node's connectivity tree along default routes.
#include "placement/connectivity_tree.h"

namespace iorelay::placement {

void BuildConnectivityTree(const Topology& topology, VertexId root, int cap, ConnectivityTree* tree,
                           std::vector<VertexId>* queue, std::vector<VertexId>* neighbors) {
  tree->root = root;
  tree->nodes.clear();
  tree->depth.clear();
  if (cap < 1) return;
  const VertexId num_nodes = topology.num_nodes();
  // queue holds (vertex, depth) pairs flattened, so one vector serves as the BFS queue.
  queue->clear();
  queue->push_back(root);
  queue->push_back(0);
  tree->nodes.push_back(root);
  tree->depth.push_back(0);
  for (size_t head = 0; head < queue->size(); head += 2) {
    const VertexId u = (*queue)[head];
    const int depth = (*queue)[head + 1] + 1;
    topology.Neighbors(u, neighbors);
    for (VertexId v : *neighbors) {
      if (v == root || topology.NextHop(v, root) != u) continue;
      if (v < num_nodes) {
        tree->nodes.push_back(v);
        tree->depth.push_back(depth);
        if (static_cast<int>(tree->nodes.size()) >= cap) return;
      }
      queue->push_back(v);
      queue->push_back(depth);
    }
  }
}

}  // namespace iorelay::placement
