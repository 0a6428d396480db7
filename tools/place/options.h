// Command-line options of iorelay-place, parsed without exceptions into one struct.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "placement/mapping_json.h"
#include "placement/policy.h"

namespace iorelay::place_tool {

struct Options {
  std::string topology;                // spec, or built from --nodes
  std::vector<std::string> policies;   // compared, in order
  std::string policy = "route-aware";  // the one whose mapping --out writes
  int ranks_per_node = 16;
  bool aggregate = false;
  int tree_cap = 256;
  placement::Unreached unreached = placement::Unreached::kDefaultBridge;
  int nodes_per_bridge = 64;  // layout for topologies that are not Blue Gene/Q midplanes
  placement::DaemonUnit unit = placement::DaemonUnit::kIonode;
  std::string out;               // mapping file to write
  bool json = false;             // metrics JSON on stdout instead of the table
  bool link_loads = false;       // add per-link message counts to the JSON
  std::vector<int> table_sizes;  // --table: Markdown comparison per Mira partition size
  bool help = false;
  nlohmann::json printed_config;  // with --print-config: the options, the form --config reads
};

std::string Usage();
Result<Options> ParseOptions(int argc, char** argv);

}  // namespace iorelay::place_tool
