// A star (one crossbar switch) is the network model until the placement topologies are wired in
// (sim/topology_zone.h): contention happens at NICs and, if given, at the backbone.
#include "sim/star_network.h"

#include <simgrid/s4u/Link.hpp>
#include <string>

namespace iorelay::sim {
namespace {

namespace sg4 = simgrid::s4u;

constexpr double kHostSpeedFlops = 1e9;  // hosts compute nothing; the speed is unused

sg4::Host* AddHost(sg4::NetZone* zone, const std::string& name, double nic_Bps, double latency_s,
                   sg4::Link* backbone) {
  sg4::Host* host = zone->create_host(name, kHostSpeedFlops);
  sg4::SplitDuplexLink* nic = zone->create_split_duplex_link(name + "_nic", nic_Bps);
  nic->set_latency(latency_s);
  std::vector<sg4::LinkInRoute> up{{nic, sg4::LinkInRoute::Direction::UP}};
  if (backbone != nullptr) up.emplace_back(backbone);
  // Symmetrical: the way in is the backbone then the NIC's down direction.
  zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, up, /*symmetrical=*/true);
  return host;
}

}  // namespace

Hosts BuildStarNetwork(const Platform& platform, int compute_nodes, int ionodes) {
  sg4::NetZone* zone = sg4::create_star_zone("machine");
  sg4::Link* backbone = nullptr;
  if (platform.network.backbone_Bps > 0) {
    backbone = zone->create_link("backbone", platform.network.backbone_Bps);
  }
  const double lat = platform.network.latency_s;
  Hosts h;
  for (int i = 0; i < compute_nodes; ++i) {
    h.compute.push_back(
        AddHost(zone, "c" + std::to_string(i), platform.compute.nic_Bps, lat, backbone));
  }
  for (int k = 0; k < ionodes; ++k) {
    h.ionodes.push_back(
        AddHost(zone, "io" + std::to_string(k), platform.ionode.nic_Bps, lat, backbone));
  }
  for (int j = 0; j < platform.storage.targets; ++j) {
    h.storage.push_back(
        AddHost(zone, "st" + std::to_string(j), platform.storage.nic_Bps, lat, backbone));
  }
  zone->seal();
  return h;
}

}  // namespace iorelay::sim
