// A dragonfly (Kim, Dally, Scott, Abts, ISCA 2008), the network of Cray XC (Aries, e.g. Cori)
// and HPE Slingshot machines: groups of routers, all-to-all local links inside a group, one
// global link between every pair of groups, compute nodes on the routers.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "placement/topology.h"

namespace iorelay::placement {

enum class DragonflyRouting {
  kMinimal,  // local hop, global hop, local hop at most
  kValiant,  // through an intermediate group chosen per (source, destination) pair
};

// `groups` groups of `routers` routers, `nodes` compute nodes per router, `globals` global ports
// per router (groups - 1 <= routers * globals). Numbering:
// - vertices: nodes [0, N) with node v on router v / nodes; routers [N, N + groups*routers),
//   router r of group g is N + g*routers + r;
// - group g reaches group h != g through its k-th global port, k = (h - g - 1) mod groups,
//   which is port k % globals of router k / globals (the "consecutive" arrangement);
// - links: node up [0, N), node down [N, 2N), local (g, r1 -> r2) after those, then global
//   (g -> h).
// Minimal routing is destination-based, as the Topology contract asks. Valiant routing changes
// Route and Hops (where traffic goes: link loads, the simulator) to source -> intermediate
// group -> destination; NextHop, and so the connectivity tree, stay minimal.
// Intra-group links are all-to-all here; Aries' rows and columns (two local hops) are not
// modelled.
class Dragonfly final : public Topology {
 public:
  static Result<Dragonfly> Make(int groups, int routers, int nodes, int globals,
                                DragonflyRouting routing = DragonflyRouting::kMinimal);

  std::string spec() const override;
  int32_t num_nodes() const override { return groups_ * routers_ * nodes_; }
  int32_t num_vertices() const override { return num_nodes() + groups_ * routers_; }
  int32_t num_links() const override;
  void Neighbors(VertexId v, std::vector<VertexId>* out) const override;
  VertexId NextHop(VertexId from, VertexId to) const override;
  void Route(VertexId from, VertexId to, std::vector<LinkId>* links) const override;
  int Hops(VertexId from, VertexId to) const override;
  std::pair<VertexId, VertexId> LinkEnds(LinkId link) const override;
  std::string LinkName(LinkId link) const override;

  int groups() const { return groups_; }
  DragonflyRouting routing() const { return routing_; }
  // The group a vertex (node or router) belongs to.
  int GroupOf(VertexId v) const;
  // The intermediate group of the Valiant route from node `from` to node `to`, or -1 when the
  // route is minimal (same group, or only two groups).
  int IntermediateGroup(VertexId from, VertexId to) const;

 private:
  Dragonfly(int groups, int routers, int nodes, int globals, DragonflyRouting routing)
      : groups_(groups), routers_(routers), nodes_(nodes), globals_(globals), routing_(routing) {}
  bool IsNode(VertexId v) const { return v < num_nodes(); }
  VertexId RouterVertex(int group, int router) const {
    return num_nodes() + group * routers_ + router;
  }
  VertexId RouterOfNode(VertexId node) const { return num_nodes() + node / nodes_; }
  int LocalIndex(VertexId router) const { return (router - num_nodes()) % routers_; }
  // The router of group `g` holding the global link to group `h`.
  VertexId GatewayRouter(int g, int h) const;
  // The next vertex from `at` toward router `target` (minimal); at != target.
  VertexId NextTowardRouter(VertexId at, VertexId target) const;
  // Appends the minimal route's links from `from` to `to` (a node or a router).
  void AppendMinimal(VertexId from, VertexId to, std::vector<LinkId>* links) const;
  LinkId LinkFromTo(VertexId from, VertexId to) const;

  int groups_;
  int routers_;
  int nodes_;
  int globals_;
  DragonflyRouting routing_;
};

}  // namespace iorelay::placement
