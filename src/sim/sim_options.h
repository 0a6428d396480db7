// iorelay-sim's command line, parsed without exceptions into a RunConfig.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "sim/simulation.h"

namespace iorelay::sim {

struct SimOptions {
  RunConfig run;
  bool help = false;
};

std::string SimUsage();
// Sizes with common/units.h; every error names the flag and the valid choices. Reads the
// platform file named by --platform.
Result<SimOptions> ParseSimOptions(const std::vector<std::string>& args);

}  // namespace iorelay::sim
