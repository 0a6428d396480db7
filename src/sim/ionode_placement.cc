// The simulator's use of src/placement, unchanged: a topology by spec, a layout, a policy by name.
#include "sim/ionode_placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "placement/bgq_layout.h"
#include "placement/io_layout.h"
#include "placement/policy.h"
#include "placement/topology_spec.h"
#include "placement/torus.h"

namespace iorelay::sim {
namespace {

// One bridge per I/O node k, at node ⌊k·N/K⌋; by default a node uses the I/O node of its block.
placement::IoLayout SpreadLayout(int32_t topology_nodes, int32_t nodes, int32_t ionodes) {
  placement::IoLayout layout;
  layout.model = "sim";
  layout.num_ionodes = ionodes;
  for (int32_t b = 0; b < ionodes; ++b) {
    layout.bridges.push_back(static_cast<placement::VertexId>(int64_t{b} * nodes / ionodes));
    layout.ionode_of_bridge.push_back(b);
  }
  layout.default_bridge.resize(topology_nodes);
  for (int32_t v = 0; v < topology_nodes; ++v) {
    layout.default_bridge[v] =
        static_cast<int32_t>(int64_t{std::min(v, nodes - 1)} * ionodes / nodes);
  }
  return layout;
}

Result<placement::IoLayout> BgqLayout(const placement::Topology& topology, const std::string& spec,
                                      int32_t nodes, int32_t ionodes) {
  const auto* torus = dynamic_cast<const placement::Torus*>(&topology);
  if (torus == nullptr || topology.num_nodes() != nodes) {
    return Status::InvalidArgument(fmt::format(
        "ionode.layout bgq needs a torus of exactly --nodes ({}) nodes, not {} ({} nodes); "
        "network.topology \"{}\" gives the Mira partition of --nodes",
        nodes, spec, topology.num_nodes(), kMiraPartitionTopology));
  }
  auto layout = placement::MakeBgqLayout(*torus);
  if (!layout.ok()) return layout.status();
  if (layout->num_ionodes != ionodes) {
    return Status::InvalidArgument(
        fmt::format("ionode.layout bgq: a {}-node partition has {} I/O nodes; --ionodes {} given",
                    nodes, layout->num_ionodes, ionodes));
  }
  return layout;
}

// The topology of `spec` resolved for `nodes`, which it must hold.
Result<std::unique_ptr<placement::Topology>> JobTopology(const std::string& topology_spec,
                                                         int32_t nodes, std::string* resolved) {
  auto spec = ResolveTopology(topology_spec, nodes);
  if (!spec.ok()) return spec.status();
  auto topology = placement::ParseTopology(*spec);
  if (!topology.ok()) return topology.status();
  if ((*topology)->num_nodes() < nodes) {
    return Status::InvalidArgument(fmt::format("topology {} has {} nodes, fewer than --nodes {}",
                                               *spec, (*topology)->num_nodes(), nodes));
  }
  *resolved = *spec;
  return topology;
}

}  // namespace

Result<std::string> ResolveTopology(const std::string& spec, int32_t nodes) {
  if (spec.empty()) return fmt::format("fattree:1x{}x1", nodes);
  if (spec != kMiraPartitionTopology) return spec;
  auto shape = placement::MiraPartitionShape(nodes);
  if (!shape.ok()) {
    return Status::InvalidArgument(
        fmt::format("network.topology {}: --nodes {} is not a Mira partition size (valid: {})",
                    spec, nodes, fmt::join(placement::MiraPartitionSizes(), ", ")));
  }
  return fmt::format("torus:{}", fmt::join(*shape, "x"));
}

Result<GatewayPlacement> PlaceStorageGateways(const std::string& topology_spec, int32_t nodes,
                                              int32_t gateways) {
  GatewayPlacement out;
  auto topology = JobTopology(topology_spec, nodes, &out.topology);
  if (!topology.ok()) return topology.status();
  const int32_t m = (*topology)->num_nodes();
  if (gateways < 1 || gateways > m) {
    return Status::InvalidArgument(fmt::format(
        "network.storage_gateways {} must be between 1 and the topology's {} nodes", gateways, m));
  }
  const bool outside_job = m - nodes >= gateways;
  const int64_t first = outside_job ? nodes : 0;
  const int64_t span = outside_job ? m - nodes : m;
  for (int64_t g = 0; g < gateways; ++g) {
    out.nodes.push_back(static_cast<int32_t>(first + g * span / gateways));
  }
  return out;
}

Result<IoNodePlacement> PlaceIoNodes(const std::string& topology_spec, IoLayoutKind layout_kind,
                                     const std::string& policy, int32_t nodes, int32_t ionodes) {
  if (ionodes < 1 || ionodes > nodes) {
    return Status::InvalidArgument(
        fmt::format("--ionodes {} must be between 0 and --nodes ({})", ionodes, nodes));
  }
  IoNodePlacement out;
  auto topology = JobTopology(topology_spec, nodes, &out.topology);
  if (!topology.ok()) return topology.status();
  const int32_t m = (*topology)->num_nodes();
  placement::IoLayout layout;
  if (layout_kind == IoLayoutKind::kBgq) {
    auto bgq = BgqLayout(**topology, out.topology, nodes, ionodes);
    if (!bgq.ok()) return bgq.status();
    layout = std::move(*bgq);
  } else {
    layout = SpreadLayout(m, nodes, ionodes);
  }
  IORELAY_RETURN_IF_ERROR(placement::FinishLayout(m, &layout));
  auto assignment = placement::Assign(policy, **topology, layout, placement::PolicyOptions{});
  if (!assignment.ok()) return assignment.status();
  out.bridges.resize(ionodes);
  std::vector<int32_t> entry_of_bridge(layout.num_bridges());
  for (int32_t b = 0; b < layout.num_bridges(); ++b) {
    std::vector<int32_t>& at = out.bridges[layout.ionode_of_bridge[b]];
    entry_of_bridge[b] = static_cast<int32_t>(at.size());
    at.push_back(static_cast<int32_t>(layout.bridges[b]));
  }
  out.ionode_of.resize(nodes);
  out.entry_of.resize(nodes);
  for (int32_t v = 0; v < nodes; ++v) {
    const int32_t b = (*assignment)[v];
    out.ionode_of[v] = layout.ionode_of_bridge[b];
    out.entry_of[v] = entry_of_bridge[b];
  }
  return out;
}

}  // namespace iorelay::sim
