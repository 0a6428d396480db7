// A two-level fat tree (leaf switches with compute nodes, spine switches above) with
// destination-mod-k up-link routing, so the same policies run on non-torus clusters.
#pragma once

#include <string>

#include "common/status.h"
#include "placement/topology.h"

namespace iorelay::placement {

// leaves leaf switches, each with nodes_per_leaf compute nodes and one up-link to each of
// uplinks spine switches. Node v sits on leaf v / nodes_per_leaf. Vertices: nodes
// [0, N), leaves [N, N + leaves), spines after. A route between different leaves goes up
// through spine (destination mod uplinks). Links: node up [0, N), node down [N, 2N),
// leaf->spine 2N + leaf*uplinks + spine, spine->leaf after those.
class FatTree final : public Topology {
 public:
  static Result<FatTree> Make(int leaves, int nodes_per_leaf, int uplinks);

  std::string spec() const override;
  int32_t num_nodes() const override { return leaves_ * per_leaf_; }
  int32_t num_vertices() const override { return num_nodes() + leaves_ + uplinks_; }
  int32_t num_links() const override { return 2 * num_nodes() + 2 * leaves_ * uplinks_; }
  void Neighbors(VertexId v, std::vector<VertexId>* out) const override;
  VertexId NextHop(VertexId from, VertexId to) const override;
  void Route(VertexId from, VertexId to, std::vector<LinkId>* links) const override;
  int Hops(VertexId from, VertexId to) const override;
  std::pair<VertexId, VertexId> LinkEnds(LinkId link) const override;
  std::string LinkName(LinkId link) const override;

  int leaves() const { return leaves_; }
  int nodes_per_leaf() const { return per_leaf_; }
  int uplinks() const { return uplinks_; }

 private:
  FatTree(int leaves, int per_leaf, int uplinks)
      : leaves_(leaves), per_leaf_(per_leaf), uplinks_(uplinks) {}
  enum class Kind { kNode, kLeaf, kSpine };
  Kind KindOf(VertexId v) const;
  VertexId LeafVertex(int leaf) const { return num_nodes() + leaf; }
  VertexId SpineVertex(int spine) const { return num_nodes() + leaves_ + spine; }
  int LeafOfNode(VertexId node) const { return node / per_leaf_; }
  LinkId LinkFromTo(VertexId from, VertexId to) const;

  int leaves_;
  int per_leaf_;
  int uplinks_;
};

}  // namespace iorelay::placement
