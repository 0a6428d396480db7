// The round-robin policy: compute node v to bridge node v mod K, ignoring the network.
#include "placement/policy.h"

namespace iorelay::placement {

Assignment RoundRobinAssignment(const Topology& topology, const IoLayout& layout) {
  const int32_t n = topology.num_nodes();
  Assignment out(n);
  for (int32_t v = 0; v < n; ++v) out[v] = v % layout.num_bridges();
  return out;
}

}  // namespace iorelay::placement
