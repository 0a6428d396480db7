// The generic ("spread") I/O layout and the consistency check shared by every layout.
#include "placement/io_layout.h"

#include <fmt/format.h>

namespace iorelay::placement {

Status FinishLayout(int32_t num_nodes, IoLayout* layout) {
  const int32_t k = layout->num_bridges();
  if (k == 0) return Status::InvalidArgument("layout has no bridge node");
  if (static_cast<int32_t>(layout->ionode_of_bridge.size()) != k ||
      static_cast<int32_t>(layout->default_bridge.size()) != num_nodes) {
    return Status::InvalidArgument("layout arrays have inconsistent sizes");
  }
  layout->bridge_at.assign(num_nodes, -1);
  for (int32_t b = 0; b < k; ++b) {
    const VertexId v = layout->bridges[b];
    if (v < 0 || v >= num_nodes || layout->bridge_at[v] != -1) {
      return Status::InvalidArgument(fmt::format("bridge {} at bad or duplicate node {}", b, v));
    }
    layout->bridge_at[v] = b;
    const int32_t ion = layout->ionode_of_bridge[b];
    if (ion < 0 || ion >= layout->num_ionodes) {
      return Status::InvalidArgument(fmt::format("bridge {} has bad I/O node {}", b, ion));
    }
  }
  for (int32_t b : layout->default_bridge) {
    if (b < 0 || b >= k) return Status::InvalidArgument("default assignment out of range");
  }
  return Status::Ok();
}

Result<IoLayout> MakeSpreadLayout(const Topology& topology, int nodes_per_bridge,
                                  int bridges_per_ionode) {
  if (nodes_per_bridge < 1 || bridges_per_ionode < 1) {
    return Status::InvalidArgument("nodes per bridge and bridges per I/O node must be >= 1");
  }
  const int64_t n = topology.num_nodes();
  const int64_t k = (n + nodes_per_bridge - 1) / nodes_per_bridge;
  IoLayout layout;
  layout.model = fmt::format("spread:{}", nodes_per_bridge);
  for (int64_t i = 0; i < k; ++i) {
    layout.bridges.push_back(static_cast<VertexId>((i * n + k - 1) / k));
    layout.ionode_of_bridge.push_back(static_cast<int32_t>(i / bridges_per_ionode));
  }
  layout.num_ionodes = static_cast<int32_t>((k + bridges_per_ionode - 1) / bridges_per_ionode);
  layout.default_bridge.resize(n);
  for (int64_t v = 0; v < n; ++v) layout.default_bridge[v] = static_cast<int32_t>(v * k / n);
  IORELAY_RETURN_IF_ERROR(FinishLayout(static_cast<int32_t>(n), &layout));
  return layout;
}

}  // namespace iorelay::placement
