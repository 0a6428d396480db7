// How iorelay-place shows results: a text table of policies, the metrics JSON, and the
// Markdown comparison of the default model and the route-aware policy per partition.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "placement/compare.h"
#include "placement/policy.h"

namespace iorelay::place_tool {

// One row per policy: hops, messages per link, bridge transits, loads.
std::string PolicyTable(const std::vector<placement::PolicyResult>& results,
                        const placement::MessageModel& model);

struct PartitionRow {
  int nodes = 0;
  std::string shape;
  placement::PolicyResult default_model;
  placement::PolicyResult route_aware;
  placement::RouteAwareStats stats;
  double route_aware_ms = 0;  // assignment time, measured by the caller
};

// A Markdown table for one partition: metric, default, route-aware, default / route-aware.
std::string PartitionMarkdown(const PartitionRow& row, const placement::MessageModel& model);
// One Markdown summary line per partition (the README table).
std::string SummaryMarkdown(const std::vector<PartitionRow>& rows,
                            const placement::MessageModel& model);

}  // namespace iorelay::place_tool
