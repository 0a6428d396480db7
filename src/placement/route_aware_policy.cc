// Route-aware, load-aware reassignment of compute nodes to bridge nodes (Malakar &
// Vishwanath; docs/placement.md): connectivity trees, then a level-by-level round robin.
#include <algorithm>
#include <climits>
#include <cstdlib>

#include "placement/connectivity_tree.h"
#include "placement/policy.h"
#include "placement/torus.h"

namespace iorelay::placement {
namespace {

// For every compute node, the trees that contain it: (bridge, depth) in bridge order (CSR).
struct Candidates {
  std::vector<int32_t> start;  // size N + 1
  std::vector<int32_t> bridge;
  std::vector<int32_t> depth;
};

Candidates InvertTrees(const std::vector<ConnectivityTree>& trees, int32_t num_nodes) {
  Candidates c;
  c.start.assign(num_nodes + 1, 0);
  for (const ConnectivityTree& t : trees) {
    for (VertexId v : t.nodes) ++c.start[v + 1];
  }
  for (int32_t v = 0; v < num_nodes; ++v) c.start[v + 1] += c.start[v];
  c.bridge.resize(c.start[num_nodes]);
  c.depth.resize(c.start[num_nodes]);
  std::vector<int32_t> fill(c.start.begin(), c.start.end() - 1);
  for (int32_t b = 0; b < static_cast<int32_t>(trees.size()); ++b) {
    for (size_t i = 0; i < trees[b].nodes.size(); ++i) {
      const int32_t slot = fill[trees[b].nodes[i]]++;
      c.bridge[slot] = b;
      c.depth[slot] = trees[b].depth[i];
    }
  }
  return c;
}

// Hop counts from one node to every bridge node. On a torus the bridges' coordinates are kept,
// so a count costs D additions instead of 2*D divisions (the unreached pass at Mira scale asks
// for millions); other topologies use Topology::Hops.
class BridgeDistances {
 public:
  BridgeDistances(const Topology& topology, const IoLayout& layout)
      : topology_(topology), layout_(layout), torus_(dynamic_cast<const Torus*>(&topology)) {
    if (torus_ == nullptr) return;
    for (VertexId b : layout.bridges) {
      for (int d = 0; d < torus_->ndims(); ++d) coords_.push_back(torus_->Coord(b, d));
    }
  }

  // hops[b] = Hops(v, bridge b) for every bridge.
  void From(VertexId v, std::vector<int>* hops) const {
    const int32_t k = layout_.num_bridges();
    hops->resize(k);
    if (torus_ == nullptr) {
      for (int32_t b = 0; b < k; ++b) (*hops)[b] = topology_.Hops(v, layout_.bridges[b]);
      return;
    }
    const int dims = torus_->ndims();
    int at[32];
    for (int d = 0; d < dims; ++d) at[d] = torus_->Coord(v, d);
    for (int32_t b = 0; b < k; ++b) {
      int sum = 0;
      for (int d = 0; d < dims; ++d) {
        const int n = torus_->dims()[d];
        const int diff = std::abs(coords_[b * dims + d] - at[d]);
        sum += std::min(diff, n - diff);
      }
      (*hops)[b] = sum;
    }
  }

 private:
  const Topology& topology_;
  const IoLayout& layout_;
  const Torus* torus_;
  std::vector<int> coords_;  // bridge-major, D per bridge
};

}  // namespace

// Load rule: a bridge may take a node only while its load <= the current average load
// (assigned nodes / K). Hence at assignment load <= (N-1)/K, so no bridge ever exceeds
// ceil(N/K) nodes from the traversal. Nodes the trees do not reach keep their default bridge
// (the paper; a bridge then holds at most ceil(N/K) + its unreached defaults) or, with
// Unreached::kNearestUnderShare, go to the nearest bridge below ceil(N/K): max load ceil(N/K).
Assignment RouteAwareAssignment(const Topology& topology, const IoLayout& layout,
                                const PolicyOptions& options, RouteAwareStats* stats) {
  const int32_t n = topology.num_nodes();
  const int32_t k = layout.num_bridges();
  std::vector<ConnectivityTree> trees(k);
  std::vector<VertexId> queue, neighbors;
  int max_depth = 0;
  int64_t tree_nodes = 0;
  for (int32_t b = 0; b < k; ++b) {
    BuildConnectivityTree(topology, layout.bridges[b], options.tree_cap, &trees[b], &queue,
                          &neighbors);
    max_depth = std::max(max_depth, trees[b].depth.back());
    tree_nodes += static_cast<int64_t>(trees[b].nodes.size());
  }
  const Candidates cand = InvertTrees(trees, n);

  Assignment out(n, -1);
  std::vector<int64_t> load(k, 0);
  int64_t total = 0;
  std::vector<size_t> pos(k, 0);
  for (int level = 0; level <= max_depth; ++level) {
    for (bool any = true; any;) {  // one node per bridge per round, within this level
      any = false;
      for (int32_t b = 0; b < k; ++b) {
        const ConnectivityTree& t = trees[b];
        if (pos[b] >= t.nodes.size() || t.depth[pos[b]] != level) continue;
        const VertexId v = t.nodes[pos[b]++];
        any = true;
        if (out[v] >= 0) continue;
        int32_t best = -1;
        int best_depth = INT_MAX;
        for (int32_t i = cand.start[v]; i < cand.start[v + 1]; ++i) {
          const int32_t j = cand.bridge[i];
          if (load[j] * k > total) continue;  // load above the average
          if (cand.depth[i] < best_depth || (cand.depth[i] == best_depth && j == b)) {
            best = j;
            best_depth = cand.depth[i];
          }
        }
        if (best < 0) continue;  // every candidate is above average: maybe a later tree
        out[v] = best;
        ++load[best];
        ++total;
      }
    }
  }
  const int64_t share = (static_cast<int64_t>(n) + k - 1) / k;
  const BridgeDistances distances(topology, layout);
  std::vector<int> hops;
  int32_t unreached = 0;
  for (int32_t v = 0; v < n; ++v) {
    if (out[v] >= 0) continue;
    ++unreached;
    out[v] = layout.default_bridge[v];
    if (options.unreached == Unreached::kNearestUnderShare) {
      // Some bridge is below the share: fewer than N nodes are assigned so far.
      distances.From(v, &hops);
      int best_hops = INT_MAX;
      for (int32_t b = 0; b < k; ++b) {
        if (load[b] < share && hops[b] < best_hops) {
          best_hops = hops[b];
          out[v] = b;
        }
      }
    }
    ++load[out[v]];
  }
  if (stats != nullptr) {
    *stats = {n - unreached, unreached, max_depth, tree_nodes};
  }
  return out;
}

}  // namespace iorelay::placement
