// Dragonfly geometry, minimal and Valiant routing (see dragonfly.h for numbering).
#include "placement/dragonfly.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>

#include "common/mix64.h"

namespace iorelay::placement {

Result<Dragonfly> Dragonfly::Make(int groups, int routers, int nodes, int globals,
                                  DragonflyRouting routing) {
  if (groups < 1 || routers < 1 || nodes < 1 || globals < 1) {
    return Status::InvalidArgument(
        "dragonfly groups, routers per group, nodes per router and global ports must be >= 1");
  }
  if (static_cast<int64_t>(groups) - 1 > static_cast<int64_t>(routers) * globals) {
    return Status::InvalidArgument(fmt::format(
        "dragonfly: {} groups need {} global links per group, but {} routers x {} ports give {}",
        groups, groups - 1, routers, globals, static_cast<int64_t>(routers) * globals));
  }
  const int64_t n = static_cast<int64_t>(groups) * routers * nodes;
  const int64_t links = 2 * n + static_cast<int64_t>(groups) * routers * (routers - 1) +
                        static_cast<int64_t>(groups) * (groups - 1);
  if (links > std::numeric_limits<int32_t>::max()) {
    return Status::InvalidArgument("dragonfly too large for 32-bit link ids");
  }
  return Dragonfly(groups, routers, nodes, globals, routing);
}

std::string Dragonfly::spec() const {
  return fmt::format("dragonfly:{}x{}x{}x{}{}", groups_, routers_, nodes_, globals_,
                     routing_ == DragonflyRouting::kValiant ? ":routing=valiant" : "");
}

int32_t Dragonfly::num_links() const {
  return 2 * num_nodes() + groups_ * routers_ * (routers_ - 1) + groups_ * (groups_ - 1);
}

int Dragonfly::GroupOf(VertexId v) const {
  return IsNode(v) ? v / (routers_ * nodes_) : (v - num_nodes()) / routers_;
}

VertexId Dragonfly::GatewayRouter(int g, int h) const {
  const int k = (h - g - 1 + groups_) % groups_;
  return RouterVertex(g, k / globals_);
}

int Dragonfly::IntermediateGroup(VertexId from, VertexId to) const {
  const int gs = GroupOf(from);
  const int gd = GroupOf(to);
  if (routing_ != DragonflyRouting::kValiant || gs == gd || groups_ < 3) return -1;
  // A fixed pseudo-random choice per pair (splitmix64), so routes are reproducible.
  const uint64_t x = Mix64(
      ((static_cast<uint64_t>(static_cast<uint32_t>(from)) << 32) | static_cast<uint32_t>(to)) +
      kGoldenGamma);
  int pick = static_cast<int>(x % static_cast<uint64_t>(groups_ - 2));
  // The pick-th group that is neither the source's nor the destination's.
  if (pick >= std::min(gs, gd)) ++pick;
  if (pick >= std::max(gs, gd)) ++pick;
  return pick;
}

void Dragonfly::Neighbors(VertexId v, std::vector<VertexId>* out) const {
  out->clear();
  if (IsNode(v)) {
    out->push_back(RouterOfNode(v));
    return;
  }
  const int index = v - num_nodes();
  const int g = index / routers_;
  const int r = index % routers_;
  for (int i = 0; i < nodes_; ++i) out->push_back(index * nodes_ + i);
  for (int other = 0; other < routers_; ++other) {
    if (other != r) out->push_back(RouterVertex(g, other));
  }
  for (int port = 0; port < globals_; ++port) {
    const int k = r * globals_ + port;
    if (k >= groups_ - 1) break;
    const int h = (g + k + 1) % groups_;
    out->push_back(GatewayRouter(h, g));
  }
}

VertexId Dragonfly::NextTowardRouter(VertexId at, VertexId target) const {
  if (IsNode(at)) return RouterOfNode(at);
  const int g = GroupOf(at);
  const int gt = GroupOf(target);
  if (g == gt) return target;
  const VertexId gateway = GatewayRouter(g, gt);
  return at != gateway ? gateway : GatewayRouter(gt, g);
}

VertexId Dragonfly::NextHop(VertexId from, VertexId to) const {
  if (IsNode(from)) return RouterOfNode(from);
  const VertexId last = RouterOfNode(to);
  return from == last ? to : NextTowardRouter(from, last);
}

LinkId Dragonfly::LinkFromTo(VertexId from, VertexId to) const {
  const int n = num_nodes();
  if (IsNode(from)) return from;  // node -> its router
  if (IsNode(to)) return n + to;  // router -> node
  const int g = GroupOf(from);
  const int h = GroupOf(to);
  if (g == h) {
    const int r1 = LocalIndex(from);
    const int r2 = LocalIndex(to);
    return 2 * n + (g * routers_ + r1) * (routers_ - 1) + (r2 < r1 ? r2 : r2 - 1);
  }
  const int k = (h - g - 1 + groups_) % groups_;
  return 2 * n + groups_ * routers_ * (routers_ - 1) + g * (groups_ - 1) + k;
}

void Dragonfly::AppendMinimal(VertexId from, VertexId to, std::vector<LinkId>* links) const {
  for (VertexId at = from; at != to;) {
    const VertexId next = IsNode(to) ? NextHop(at, to) : NextTowardRouter(at, to);
    links->push_back(LinkFromTo(at, next));
    at = next;
  }
}

void Dragonfly::Route(VertexId from, VertexId to, std::vector<LinkId>* links) const {
  const int via = IntermediateGroup(from, to);
  if (via < 0) return AppendMinimal(from, to, links);
  // Into the intermediate group at the router holding its link from the source's group, then
  // minimally to the destination.
  const VertexId entry = GatewayRouter(via, GroupOf(from));
  AppendMinimal(from, entry, links);
  AppendMinimal(entry, to, links);
}

int Dragonfly::Hops(VertexId from, VertexId to) const {
  if (IntermediateGroup(from, to) < 0) {
    int hops = 0;
    for (VertexId at = from; at != to; at = NextHop(at, to)) ++hops;
    return hops;
  }
  std::vector<LinkId> links;
  Route(from, to, &links);
  return static_cast<int>(links.size());
}

std::pair<VertexId, VertexId> Dragonfly::LinkEnds(LinkId link) const {
  const int n = num_nodes();
  if (link < n) return {link, RouterOfNode(link)};
  if (link < 2 * n) return {RouterOfNode(link - n), link - n};
  const int local = link - 2 * n;
  if (local < groups_ * routers_ * (routers_ - 1)) {
    const int source = local / (routers_ - 1);  // g * routers + r1
    const int j = local % (routers_ - 1);
    const int r1 = source % routers_;
    const int g = source / routers_;
    return {RouterVertex(g, r1), RouterVertex(g, j < r1 ? j : j + 1)};
  }
  const int global = local - groups_ * routers_ * (routers_ - 1);
  const int g = global / (groups_ - 1);
  const int h = (g + global % (groups_ - 1) + 1) % groups_;
  return {GatewayRouter(g, h), GatewayRouter(h, g)};
}

std::string Dragonfly::LinkName(LinkId link) const {
  auto name = [this](VertexId v) {
    if (IsNode(v)) return fmt::format("n{}", v);
    return fmt::format("g{}r{}", GroupOf(v), LocalIndex(v));
  };
  const auto [tail, head] = LinkEnds(link);
  return name(tail) + ">" + name(head);
}

}  // namespace iorelay::placement
