// iorelay-sim's command line: one option table (common/option_table.h) bound to a RunConfig, so
// parsing, --help, --print-config and --config FILE.json come from one list of rows.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/simulation.h"
#include "sim/trace_replay.h"

namespace iorelay::sim {

struct SimOptions {
  std::string platform_path;
  RunConfig run;  // run.platform is loaded from platform_path
  // --replay TRACE: replay an iorelayd trace through one I/O node instead of a pattern
  // (sim/trace_replay.h); the trace is read by ParseSimOptions.
  std::string replay_path;
  bool list_dispatches = false;
  ReplayTrace replay;
  bool help = false;
  nlohmann::json printed_config;  // --print-config: the options as given (null otherwise)
};

std::string SimUsage();
// Parses, then (unless --help or --print-config) reads the platform file. Every error is one
// line naming the option and the valid choices. The rest of the run (scheduler spec, placement,
// pattern) is checked by Run before it simulates anything.
Result<SimOptions> ParseSimOptions(const std::vector<std::string>& args);

}  // namespace iorelay::sim
