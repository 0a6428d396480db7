// iorelay-place: compares I/O-node assignment policies on a topology, prints their metrics and
// writes the chosen mapping as the JSON file the client's placement (map:FILE) reads.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "common/version_flag.h"
#include "options.h"
#include "placement/bgq_layout.h"
#include "placement/compare.h"
#include "placement/mapping_json.h"
#include "placement/topology_spec.h"
#include "placement/torus.h"
#include "report.h"

namespace iorelay::place_tool {
namespace {

using placement::PolicyResult;

int Fail(const Status& status, int exit_code = 2) {
  fmt::print(stderr, "iorelay-place: {}\n", status.message());
  return exit_code;
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return Status::LastError("open " + path);
  f << text;
  f.close();
  if (!f) return Status::LastError("write " + path);
  return Status::Ok();
}

nlohmann::json ReportJson(const placement::Topology& topology, const placement::IoLayout& layout,
                          const std::vector<PolicyResult>& results, const Options& o) {
  nlohmann::json doc = {
      {"topology", topology.spec()},
      {"layout", layout.model},
      {"nodes", topology.num_nodes()},
      {"bridges", layout.num_bridges()},
      {"ionodes", layout.num_ionodes},
      {"ranks_per_node", o.ranks_per_node},
      {"aggregate", o.aggregate},
      {"tree_cap", o.tree_cap},
      {"unreached", o.unreached == placement::Unreached::kDefaultBridge ? "default" : "nearest"},
      {"mapping_policy", o.policy},
      {"mapping_file", o.out.empty() ? nlohmann::json() : nlohmann::json(o.out)}};
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json loads = nlohmann::json::object();
  const placement::MessageModel model{o.ranks_per_node, o.aggregate};
  for (const PolicyResult& r : results) {
    rows.push_back({{"policy", r.policy},
                    {"metrics", placement::MetricsToJson(r.metrics)},
                    {"metrics_aggregated", placement::MetricsToJson(r.metrics_aggregated)}});
    if (o.link_loads && (r.policy == o.policy || r.policy == "default")) {
      std::vector<int64_t> links;
      (void)placement::ComputeMetrics(topology, layout, r.assignment, model, &links);
      loads[r.policy] = links;
    }
  }
  doc["policies"] = std::move(rows);
  if (o.link_loads) doc["link_messages"] = std::move(loads);
  return doc;
}

int RunOne(Options o) {
  auto topology = placement::ParseTopology(o.topology);
  if (!topology.ok()) return Fail(topology.status());
  Result<placement::IoLayout> layout = placement::ChooseLayout(**topology, o.nodes_per_bridge);
  if (!layout.ok()) return Fail(layout.status());
  bool listed = false;
  for (const std::string& p : o.policies) listed = listed || p == o.policy;
  if (!listed) o.policies.push_back(o.policy);
  const placement::MessageModel model{o.ranks_per_node, o.aggregate};
  auto results = placement::ComparePolicies(
      **topology, *layout, o.policies, placement::PolicyOptions{o.tree_cap, o.unreached}, model);
  if (!results.ok()) return Fail(results.status());
  if (!o.out.empty()) {
    for (const PolicyResult& r : *results) {
      if (r.policy != o.policy) continue;
      const nlohmann::json doc = placement::MappingDocument(**topology, *layout, r.assignment,
                                                            r.policy, o.unit, &r.metrics);
      Status st = WriteFile(o.out, doc.dump(1) + "\n");
      if (!st.ok()) return Fail(st, 1);
    }
  }
  if (o.json) {
    std::cout << ReportJson(**topology, *layout, *results, o).dump(1) << "\n";
    return 0;
  }
  fmt::print("topology {} ({} nodes), layout {}: {} bridge nodes, {} I/O nodes\n",
             (*topology)->spec(), (*topology)->num_nodes(), layout->model, layout->num_bridges(),
             layout->num_ionodes);
  fmt::print("{}", PolicyTable(*results, model));
  if (!o.out.empty()) fmt::print("mapping ({}) written to {}\n", o.policy, o.out);
  return 0;
}

int RunTable(const Options& o) {
  const placement::MessageModel model{o.ranks_per_node, o.aggregate};
  std::vector<PartitionRow> rows;
  std::string details;
  for (int nodes : o.table_sizes) {
    Result<std::vector<int>> shape = placement::MiraPartitionShape(nodes);
    if (!shape.ok()) return Fail(shape.status());
    Result<placement::Torus> torus = placement::Torus::Make(*shape);
    if (!torus.ok()) return Fail(torus.status());
    Result<placement::IoLayout> layout = placement::MakeBgqLayout(*torus);
    if (!layout.ok()) return Fail(layout.status());
    PartitionRow row;
    row.nodes = nodes;
    row.shape = fmt::format("{}", fmt::join(*shape, "x"));
    const placement::PolicyOptions options{o.tree_cap, o.unreached};
    const auto start = std::chrono::steady_clock::now();
    (void)placement::RouteAwareAssignment(*torus, *layout, options, &row.stats);
    row.route_aware_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    auto results =
        placement::ComparePolicies(*torus, *layout, {"default", "route-aware"}, options, model);
    if (!results.ok()) return Fail(results.status());
    row.default_model = std::move((*results)[0]);
    row.route_aware = std::move((*results)[1]);
    details += PartitionMarkdown(row, model) + "\n";
    rows.push_back(std::move(row));
  }
  fmt::print("{}\n{}", SummaryMarkdown(rows, model), details);
  return 0;
}

}  // namespace
}  // namespace iorelay::place_tool

int main(int argc, char** argv) {
  using namespace iorelay::place_tool;
  if (iorelay::PrintVersionIfAsked(argc, argv, "iorelay-place")) return 0;
  iorelay::Result<Options> options = ParseOptions(argc, argv);
  if (!options.ok()) {
    fmt::print(stderr, "iorelay-place: {}\n{}", options.status().message(), Usage());
    return 2;
  }
  if (options->help) {
    fmt::print("{}", Usage());
    return 0;
  }
  if (!options->printed_config.is_null()) {
    fmt::print("{}\n", options->printed_config.dump(2));
    return 0;
  }
  if (!options->table_sizes.empty()) return RunTable(*options);
  return RunOne(*options);
}
