// Hosts and links of a topology in SimGrid, routed by the topology itself (see topology_zone.h).
#include "sim/topology_zone.h"

#include <cstdio>
#include <cstdlib>

namespace iorelay::sim {

TopologyZone* TopologyZone::Create(const std::string& name, simgrid::s4u::NetZone* parent,
                                   const placement::Topology& topology, const LinkParams& links,
                                   double host_speed_flops, const Pairs* talking) {
  auto* zone = new TopologyZone(name, topology);
  zone->set_parent(parent->get_impl());
  zone->latency_s_ = links.latency_s;
  simgrid::s4u::NetZone* iface = zone->get_iface();
  // Hosts are created in node order, so a host's NetPoint id in this zone is its node id.
  zone->hosts_.reserve(topology.num_nodes());
  for (placement::VertexId v = 0; v < topology.num_nodes(); ++v) {
    zone->hosts_.push_back(iface->create_host(name + "/n" + std::to_string(v), host_speed_flops));
  }
  std::vector<bool> used(topology.num_links(), talking == nullptr);
  std::vector<placement::LinkId> route;
  for (const auto& [a, b] : talking != nullptr ? *talking : Pairs{}) {
    route.clear();
    topology.Route(a, b, &route);
    topology.Route(b, a, &route);
    for (placement::LinkId l : route) used[l] = true;
  }
  zone->links_.assign(topology.num_links(), nullptr);
  for (placement::LinkId l = 0; l < topology.num_links(); ++l) {
    if (!used[l]) continue;
    zone->links_[l] = iface->create_link(name + "/" + topology.LinkName(l), links.bandwidth_Bps)
                          ->set_latency(links.latency_s)
                          ->seal();
  }
  // A host talking to itself (a rank on an I/O node's bridge node) crosses no topology link, but
  // SimGrid needs a route with a link: one fat-pipe loopback shared by every host, which gives
  // each such flow its full bandwidth.
  zone->loopback_ = iface->create_link(name + "/loopback", kLoopbackBps)
                        ->set_sharing_policy(simgrid::s4u::Link::SharingPolicy::FATPIPE)
                        ->set_latency(0)
                        ->seal();
  iface->seal();
  return zone;
}

void TopologyZone::get_local_route(const simgrid::kernel::routing::NetPoint* src,
                                   const simgrid::kernel::routing::NetPoint* dst,
                                   simgrid::kernel::routing::Route* into, double* latency) {
  if (src == dst) {
    into->link_list_.push_back(loopback_->get_impl());
    return;
  }
  thread_local std::vector<placement::LinkId> route;
  route.clear();
  topology_.Route(static_cast<placement::VertexId>(src->id()),
                  static_cast<placement::VertexId>(dst->id()), &route);
  for (placement::LinkId l : route) {
    if (links_[l] == nullptr) {
      std::fprintf(stderr, "iorelay-sim: no route was made from node %d to node %d of %s\n",
                   static_cast<int>(src->id()), static_cast<int>(dst->id()), get_cname());
      std::abort();
    }
    into->link_list_.push_back(links_[l]->get_impl());
  }
  if (latency != nullptr) *latency += latency_s_ * static_cast<double>(route.size());
}

}  // namespace iorelay::sim
