// Nearest-by-hops with balance: bridges grow balls of increasing hop distance in turn and
// take unassigned nodes until each has its equal share.
#include <algorithm>

#include "placement/policy.h"

namespace iorelay::placement {

// Each bridge keeps its frontier (vertices at exactly its current distance d). Per level, the
// non-full bridges take one node of their frontier in turn, then all expand to distance d+1
// (a neighbour w joins if Hops(w, bridge) == d+1; a stamp array removes duplicates). A bridge
// stops growing once full, so the cost is about K * share * degree for balanced layouts.
// Every node ends assigned: while one is not, some bridge is not full and keeps growing.
Assignment NearestAssignment(const Topology& topology, const IoLayout& layout) {
  const int32_t n = topology.num_nodes();
  const int32_t k = layout.num_bridges();
  const int64_t cap = (static_cast<int64_t>(n) + k - 1) / k;
  Assignment out(n, -1);
  std::vector<int64_t> load(k, 0);
  std::vector<std::vector<VertexId>> frontier(k);
  std::vector<size_t> taken(k, 0);
  for (int32_t b = 0; b < k; ++b) frontier[b] = {layout.bridges[b]};
  std::vector<int64_t> stamp(topology.num_vertices(), -1);
  std::vector<VertexId> next, neighbors;
  int32_t assigned = 0;
  int64_t epoch = 0;
  for (int d = 0; assigned < n; ++d) {
    bool any_left = true;
    while (any_left) {  // round robin: one node per bridge per turn
      any_left = false;
      for (int32_t b = 0; b < k; ++b) {
        std::vector<VertexId>& f = frontier[b];
        while (load[b] < cap && taken[b] < f.size()) {
          const VertexId v = f[taken[b]++];
          if (v >= n || out[v] >= 0) continue;
          out[v] = b;
          ++load[b];
          ++assigned;
          any_left = true;
          break;
        }
      }
    }
    bool grew = false;
    for (int32_t b = 0; b < k; ++b) {
      if (load[b] >= cap) {
        frontier[b].clear();
        continue;
      }
      next.clear();
      const int64_t mark = ++epoch;
      const VertexId root = layout.bridges[b];
      for (VertexId u : frontier[b]) {
        topology.Neighbors(u, &neighbors);
        for (VertexId w : neighbors) {
          if (stamp[w] == mark || topology.Hops(w, root) != d + 1) continue;
          stamp[w] = mark;
          next.push_back(w);
        }
      }
      frontier[b].swap(next);
      taken[b] = 0;
      grew = grew || !frontier[b].empty();
    }
    if (!grew) break;
  }
  for (int32_t v = 0; v < n; ++v) {
    if (out[v] < 0) out[v] = layout.default_bridge[v];
  }
  return out;
}

}  // namespace iorelay::placement
