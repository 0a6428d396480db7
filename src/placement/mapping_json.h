// The mapping file the client's placement reads (IORELAY_PLACEMENT=map:FILE):
// {"mapping": {"<client node id>": <daemon index>, ...}, ...extra keys}, and metrics as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "placement/io_layout.h"
#include "placement/metrics.h"
#include "placement/topology.h"

namespace iorelay::placement {

// What a daemon is: one per I/O node (daemon index = I/O node index, the default) or one per
// bridge node (daemon index = bridge index).
enum class DaemonUnit { kIonode, kBridge };

// Daemon index of each compute node under `unit`.
std::vector<int32_t> DaemonIndices(const IoLayout& layout, const Assignment& assignment,
                                   DaemonUnit unit);

// The whole mapping document: "mapping" (node id as a decimal string -> daemon index), plus
// "format", "topology", "policy", "daemon_unit", "daemons" (count), "bridge_nodes" (bridge
// index -> node id), "ionode_of_bridge", and "metrics" when metrics is not null.
nlohmann::json MappingDocument(const Topology& topology, const IoLayout& layout,
                               const Assignment& assignment, std::string_view policy,
                               DaemonUnit unit, const MappingMetrics* metrics);

nlohmann::json MetricsToJson(const MappingMetrics& metrics);

// Reads a mapping document's "mapping" back: result[node] = daemon index, for node ids
// 0..max present; nodes absent from the file get -1. InvalidArgument on malformed input.
Result<std::vector<int32_t>> ParseMapping(std::string_view text);

}  // namespace iorelay::placement
