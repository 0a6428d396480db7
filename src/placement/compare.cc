// Policy comparison and the choice of I/O layout for a topology.
#include "placement/compare.h"

#include "placement/bgq_layout.h"
#include "placement/torus.h"

namespace iorelay::placement {

Result<IoLayout> ChooseLayout(const Topology& topology, int nodes_per_bridge) {
  if (const auto* torus = dynamic_cast<const Torus*>(&topology); torus != nullptr) {
    Result<IoLayout> bgq = MakeBgqLayout(*torus);
    if (bgq.ok()) return bgq;
  }
  return MakeSpreadLayout(topology, nodes_per_bridge);
}

Result<std::vector<PolicyResult>> ComparePolicies(const Topology& topology, const IoLayout& layout,
                                                  const std::vector<std::string>& policies,
                                                  const PolicyOptions& options,
                                                  const MessageModel& model) {
  std::vector<PolicyResult> out;
  MessageModel aggregated = model;
  aggregated.aggregate = true;
  for (const std::string& name : policies) {
    Result<Assignment> a = Assign(name, topology, layout, options);
    if (!a.ok()) return a.status();
    Result<MappingMetrics> m = ComputeMetrics(topology, layout, *a, model);
    if (!m.ok()) return m.status();
    Result<MappingMetrics> ma = ComputeMetrics(topology, layout, *a, aggregated);
    if (!ma.ok()) return ma.status();
    out.push_back({name, std::move(*a), *m, *ma});
  }
  return out;
}

}  // namespace iorelay::placement
