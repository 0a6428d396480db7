// A star (one crossbar switch): contention happens at NICs and, if given, at the backbone. With a
// topology, the compute side is a TopologyZone instead (sim/topology_zone.h).
#include "sim/network.h"

#include <simgrid/s4u/Link.hpp>
#include <string>

#include "sim/topology_zone.h"

namespace iorelay::sim {
namespace {

namespace sg4 = simgrid::s4u;

constexpr double kHostSpeedFlops = 1e9;  // only the cpu pool computes (sim/cpu_pool.h)

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

// The platform's cores (Hosts::cpu_of_node, cpu_of_ionode): hosts that run executions only, so
// they need no link or route.
void AddCpuPools(sg4::NetZone* zone, const CpuParams& cpu, Hosts* h) {
  const size_t nodes = h->compute.size();
  const size_t ionodes = h->ionode_storage.size();
  h->cpu_of_node.assign(nodes, nullptr);
  h->cpu_of_ionode.assign(ionodes, nullptr);
  if (cpu.cores == 0) return;
  const auto pool = [&](const std::string& name) {
    return zone->create_host(name, kHostSpeedFlops)->set_core_count(cpu.cores);
  };
  if (cpu.scope == CpuScope::kMachine) {
    sg4::Host* machine = pool("cpu");
    h->cpu_of_node.assign(nodes, machine);
    h->cpu_of_ionode.assign(ionodes, machine);
    return;
  }
  for (size_t i = 0; i < nodes; ++i) h->cpu_of_node[i] = pool("cpu" + std::to_string(i));
  for (size_t k = 0; k < ionodes; ++k) h->cpu_of_ionode[k] = pool("iocpu" + std::to_string(k));
}

// The data targets, the metadata server and the cpu pools, into *h (after the compute and I/O
// nodes).
void AddStorageHosts(sg4::NetZone* zone, const Platform& platform, sg4::Link* backbone, Hosts* h) {
  const double lat = platform.network.latency_s;
  for (int j = 0; j < platform.storage.targets; ++j) {
    h->storage.push_back(
        AddHost(zone, "st" + std::to_string(j), platform.storage.nic_Bps, lat, backbone));
  }
  if (platform.storage.metadata_service_ns > 0) {
    for (int m = 0; m < platform.storage.metadata_servers; ++m) {
      const std::string name = m == 0 ? "mds" : "mds" + std::to_string(m);
      h->metadata.push_back(AddHost(zone, name, platform.storage.nic_Bps, lat, backbone));
    }
  }
  AddCpuPools(zone, platform.cpu, h);
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
    h.ionode_storage.push_back(
        AddHost(zone, "io" + std::to_string(k), platform.ionode.nic_Bps, lat, backbone));
    h.ionode_front.push_back({h.ionode_storage.back()});
  }
  AddStorageHosts(zone, platform, backbone, &h);
  zone->seal();
  return h;
}

Hosts BuildTopologyNetwork(const Platform& platform, const placement::Topology& topology,
                           int compute_nodes, const std::vector<std::vector<int32_t>>& bridges,
                           const std::vector<int32_t>& gateways,
                           const std::vector<std::pair<int32_t, int32_t>>& talking) {
  sg4::NetZone* root = sg4::create_full_zone("machine");
  const double lat = platform.network.latency_s;
  TopologyZone* net = TopologyZone::Create(
      "net", root, topology, LinkParams{platform.network.link_Bps, lat}, kHostSpeedFlops, &talking);
  Hosts h;
  for (int i = 0; i < compute_nodes; ++i) h.compute.push_back(net->host(i));
  for (const std::vector<int32_t>& at : bridges) {
    std::vector<sg4::Host*>& front = h.ionode_front.emplace_back();
    for (int32_t bridge : at) front.push_back(net->host(bridge));
  }
  sg4::NetZone* storage = sg4::create_star_zone("storage")->set_parent(root);
  sg4::Link* backbone = nullptr;
  if (platform.network.backbone_Bps > 0) {
    backbone = storage->create_link("backbone", platform.network.backbone_Bps);
  }
  for (size_t k = 0; k < bridges.size(); ++k) {
    h.ionode_storage.push_back(
        AddHost(storage, "io" + std::to_string(k), platform.ionode.nic_Bps, lat, backbone));
    std::vector<sg4::Host*>& links = h.ionode_bridge.emplace_back();
    for (size_t e = 0; platform.ionode.bridge_link_Bps > 0 && e < bridges[k].size(); ++e) {
      links.push_back(AddHost(storage, "io" + std::to_string(k) + "b" + std::to_string(e),
                              platform.ionode.bridge_link_Bps, lat, nullptr));
    }
  }
  for (size_t g = 0; g < gateways.size(); ++g) {
    h.gateway_front.push_back(net->host(gateways[g]));
    h.gateway_storage.push_back(AddHost(storage, "gw" + std::to_string(g),
                                        platform.network.storage_gateway_nic_Bps, lat, backbone));
  }
  AddStorageHosts(storage, platform, backbone, &h);
  storage->seal();
  root->seal();
  return h;
}

}  // namespace iorelay::sim
