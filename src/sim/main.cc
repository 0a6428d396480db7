// iorelay-sim: one simulated run, JSON on stdout (a thin main over sim::Run).
#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include "common/version_flag.h"
#include "sim/sim_options.h"
#include "sim/simulation.h"
#include "sim/trace_replay.h"

int main(int argc, char** argv) {
  if (iorelay::PrintVersionIfAsked(argc, argv, "iorelay-sim")) return 0;
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto options = iorelay::sim::ParseSimOptions(args);
  if (!options.ok()) {
    std::fprintf(stderr, "iorelay-sim: %s\n", options.status().message().c_str());
    return 2;
  }
  if (options->help) {
    std::fputs(iorelay::sim::SimUsage().c_str(), stdout);
    return 0;
  }
  if (!options->printed_config.is_null()) {
    std::printf("%s\n", options->printed_config.dump(2).c_str());
    return 0;
  }
  if (!options->replay_path.empty()) {
    auto replayed = iorelay::sim::RunReplay(options->run, options->replay);
    if (!replayed.ok()) {
      std::fprintf(stderr, "iorelay-sim: %s\n", replayed.status().message().c_str());
      return replayed.status().code() == EINVAL ? 2 : 1;
    }
    const nlohmann::json j = iorelay::sim::ReplayJson(options->run, options->replay, *replayed,
                                                      options->list_dispatches);
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  auto result = iorelay::sim::Run(options->run);
  if (!result.ok()) {
    std::fprintf(stderr, "iorelay-sim: %s\n", result.status().message().c_str());
    return result.status().code() == EINVAL ? 2 : 1;  // bad input, or a failed simulation
  }
  std::printf("%s\n", iorelay::sim::ToJson(options->run, *result).dump(2).c_str());
  return 0;
}
