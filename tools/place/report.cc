// Formats policy comparisons as aligned text and Markdown (numbers only, no I/O).
#include "report.h"

#include <fmt/format.h>

namespace iorelay::place_tool {
namespace {

using placement::MappingMetrics;

std::string Ratio(double a, double b) {
  if (b == 0) return a == 0 ? "1" : "all removed";
  return fmt::format("{:.2f}x", a / b);
}

}  // namespace

std::string PolicyTable(const std::vector<placement::PolicyResult>& results,
                        const placement::MessageModel& model) {
  std::string out = fmt::format(
      "messages: {} per node ({})\n", model.messages_per_node(),
      model.aggregate ? "intra-node aggregation" : fmt::format("{} ranks", model.ranks_per_node));
  out += fmt::format("{:<12} {:>9} {:>8} {:>13} {:>13} {:>8} {:>10} {:>15} {:>13} {:>13}\n",
                     "policy", "hops_mean", "hops_max", "link_msgs_max", "link_msgs_avg", "link_cv",
                     "links_used", "bridge_transit", "bridge_load", "ionode_load");
  for (const placement::PolicyResult& r : results) {
    const MappingMetrics& m = r.metrics;
    out +=
        fmt::format("{:<12} {:>9.3f} {:>8} {:>13} {:>13.1f} {:>8.3f} {:>10} {:>15} {:>13} {:>13}\n",
                    r.policy, m.hops_mean, m.hops_max, m.link_messages.max, m.link_messages.mean,
                    m.link_messages.cv, m.links_used, m.bridge_transit_messages,
                    fmt::format("{}..{}", m.bridge_load.min, m.bridge_load.max),
                    fmt::format("{}..{}", m.ionode_load.min, m.ionode_load.max));
  }
  return out;
}

std::string PartitionMarkdown(const PartitionRow& row, const placement::MessageModel& model) {
  const MappingMetrics& d = row.default_model.metrics;
  const MappingMetrics& r = row.route_aware.metrics;
  const MappingMetrics& da = row.default_model.metrics_aggregated;
  const MappingMetrics& ra = row.route_aware.metrics_aggregated;
  std::string out = fmt::format(
      "### {} nodes ({}), {} bridge nodes, {} I/O nodes\n\n"
      "| metric | default | route-aware | default / route-aware |\n|---|---:|---:|---:|\n",
      row.nodes, row.shape, d.bridges, d.ionodes);
  auto line = [&out](const std::string& name, double a, double b, const char* fmt_spec) {
    out += fmt::format("| {} | {} | {} | {} |\n", name, fmt::format(fmt::runtime(fmt_spec), a),
                       fmt::format(fmt::runtime(fmt_spec), b), Ratio(a, b));
  };
  const std::string ranks = fmt::format("{} ranks/node", model.ranks_per_node);
  line("mean hops", d.hops_mean, r.hops_mean, "{:.3f}");
  line("max hops", d.hops_max, r.hops_max, "{:.0f}");
  line("max messages on a link (" + ranks + ")", static_cast<double>(d.link_messages.max),
       static_cast<double>(r.link_messages.max), "{:.0f}");
  line("mean messages per used link (" + ranks + ")", d.link_messages.mean, r.link_messages.mean,
       "{:.1f}");
  line("link load CV", d.link_messages.cv, r.link_messages.cv, "{:.3f}");
  line("links used", static_cast<double>(d.links_used), static_cast<double>(r.links_used),
       "{:.0f}");
  line("bridge-transit messages (" + ranks + ")", static_cast<double>(d.bridge_transit_messages),
       static_cast<double>(r.bridge_transit_messages), "{:.0f}");
  line("bridge-transit messages (aggregated)", static_cast<double>(da.bridge_transit_messages),
       static_cast<double>(ra.bridge_transit_messages), "{:.0f}");
  line("max compute nodes per bridge", static_cast<double>(d.bridge_load.max),
       static_cast<double>(r.bridge_load.max), "{:.0f}");
  line("max compute nodes per I/O node", static_cast<double>(d.ionode_load.max),
       static_cast<double>(r.ionode_load.max), "{:.0f}");
  out += fmt::format(
      "\nroute-aware: {} nodes assigned through the trees, {} reached by no tree (placed by "
      "the --unreached rule), deepest level {}, {:.1f} ms\n",
      row.stats.reached, row.stats.unreached, row.stats.max_depth, row.route_aware_ms);
  return out;
}

std::string SummaryMarkdown(const std::vector<PartitionRow>& rows,
                            const placement::MessageModel& model) {
  std::string out = fmt::format(
      "| nodes | shape | mean hops (default → route-aware) | max msgs/link, {} ranks/node | "
      "link CV | bridge-transit msgs | transit ratio | max nodes/bridge |\n"
      "|---:|---|---|---|---|---|---:|---|\n",
      model.ranks_per_node);
  for (const PartitionRow& row : rows) {
    const MappingMetrics& d = row.default_model.metrics;
    const MappingMetrics& r = row.route_aware.metrics;
    out += fmt::format(
        "| {} | {} | {:.2f} → {:.2f} | {} → {} | {:.3f} → {:.3f} | {} → {} | {} | {} → {} |\n",
        row.nodes, row.shape, d.hops_mean, r.hops_mean, d.link_messages.max, r.link_messages.max,
        d.link_messages.cv, r.link_messages.cv, d.bridge_transit_messages,
        r.bridge_transit_messages,
        Ratio(static_cast<double>(d.bridge_transit_messages),
              static_cast<double>(r.bridge_transit_messages)),
        d.bridge_load.max, r.bridge_load.max);
  }
  return out;
}

}  // namespace iorelay::place_tool
