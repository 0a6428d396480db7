// Two-level fat tree geometry and destination-mod-k routing (see fattree.h for numbering).
#include "placement/fattree.h"

#include <fmt/format.h>

#include <limits>

namespace iorelay::placement {

Result<FatTree> FatTree::Make(int leaves, int nodes_per_leaf, int uplinks) {
  if (leaves < 1 || nodes_per_leaf < 1 || uplinks < 1) {
    return Status::InvalidArgument("fat tree leaves, nodes per leaf and up-links must be >= 1");
  }
  const int64_t links = 2 * static_cast<int64_t>(leaves) * nodes_per_leaf +
                        2 * static_cast<int64_t>(leaves) * uplinks;
  if (links > std::numeric_limits<int32_t>::max()) {
    return Status::InvalidArgument("fat tree too large for 32-bit link ids");
  }
  return FatTree(leaves, nodes_per_leaf, uplinks);
}

std::string FatTree::spec() const {
  return fmt::format("fattree:{}x{}x{}", leaves_, per_leaf_, uplinks_);
}

FatTree::Kind FatTree::KindOf(VertexId v) const {
  if (v < num_nodes()) return Kind::kNode;
  return v < num_nodes() + leaves_ ? Kind::kLeaf : Kind::kSpine;
}

void FatTree::Neighbors(VertexId v, std::vector<VertexId>* out) const {
  out->clear();
  switch (KindOf(v)) {
    case Kind::kNode:
      out->push_back(LeafVertex(LeafOfNode(v)));
      break;
    case Kind::kLeaf: {
      const int leaf = v - num_nodes();
      for (int i = 0; i < per_leaf_; ++i) out->push_back(leaf * per_leaf_ + i);
      if (leaves_ > 1) {
        for (int s = 0; s < uplinks_; ++s) out->push_back(SpineVertex(s));
      }
      break;
    }
    case Kind::kSpine:
      for (int l = 0; l < leaves_; ++l) out->push_back(LeafVertex(l));
      break;
  }
}

VertexId FatTree::NextHop(VertexId from, VertexId to) const {
  const int dest_leaf = LeafOfNode(to);
  switch (KindOf(from)) {
    case Kind::kNode:
      return LeafVertex(LeafOfNode(from));
    case Kind::kLeaf:
      return from == LeafVertex(dest_leaf) ? to : SpineVertex(to % uplinks_);
    case Kind::kSpine:
      return LeafVertex(dest_leaf);
  }
  return to;
}

LinkId FatTree::LinkFromTo(VertexId from, VertexId to) const {
  const int n = num_nodes();
  if (KindOf(from) == Kind::kNode) return from;  // node -> its leaf
  if (KindOf(to) == Kind::kNode) return n + to;  // leaf -> node
  if (KindOf(from) == Kind::kLeaf) {             // leaf -> spine
    return 2 * n + (from - n) * uplinks_ + (to - n - leaves_);
  }
  return 2 * n + leaves_ * uplinks_ + (to - n) * uplinks_ + (from - n - leaves_);  // spine->leaf
}

void FatTree::Route(VertexId from, VertexId to, std::vector<LinkId>* links) const {
  for (VertexId at = from; at != to;) {
    const VertexId next = NextHop(at, to);
    links->push_back(LinkFromTo(at, next));
    at = next;
  }
}

int FatTree::Hops(VertexId from, VertexId to) const {
  int hops = 0;
  for (VertexId at = from; at != to; at = NextHop(at, to)) ++hops;
  return hops;
}

std::pair<VertexId, VertexId> FatTree::LinkEnds(LinkId link) const {
  const int n = num_nodes();
  if (link < n) return {link, LeafVertex(LeafOfNode(link))};
  if (link < 2 * n) return {LeafVertex(LeafOfNode(link - n)), link - n};
  const int up = link - 2 * n;
  if (up < leaves_ * uplinks_) return {LeafVertex(up / uplinks_), SpineVertex(up % uplinks_)};
  const int down = up - leaves_ * uplinks_;
  return {SpineVertex(down % uplinks_), LeafVertex(down / uplinks_)};
}

std::string FatTree::LinkName(LinkId link) const {
  auto name = [this](VertexId v) {
    switch (KindOf(v)) {
      case Kind::kNode:
        return fmt::format("n{}", v);
      case Kind::kLeaf:
        return fmt::format("leaf{}", v - num_nodes());
      case Kind::kSpine:
        break;
    }
    return fmt::format("spine{}", v - num_nodes() - leaves_);
  };
  const auto [tail, head] = LinkEnds(link);
  return name(tail) + ">" + name(head);
}

}  // namespace iorelay::placement
