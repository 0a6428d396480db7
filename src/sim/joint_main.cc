// iorelay-sim-joint: several jobs in one simulation (sim/joint_run.h), JSON in (a file, or - for
// standard input) and JSON out, one entry per job.
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "common/version_flag.h"
#include "sim/joint_run.h"

int main(int argc, char** argv) {
  if (iorelay::PrintVersionIfAsked(argc, argv, "iorelay-sim-joint")) return 0;
  if (argc != 2 || std::string(argv[1]) == "--help") {
    std::fputs(
        "usage: iorelay-sim-joint JOBS.json|-\n"
        "  {\"platform\": FILE, \"scheduler\": \"fifo\", \"placement\": \"block\", \"seed\": 1,\n"
        "   \"jobs\": [{\"layout\", \"spatiality\", \"operation\", \"odirect\", \"request\",\n"
        "              \"total\", \"max_requests\", \"ranks\", \"nodes\", \"ionodes\", "
        "\"start\"}]}\n",
        argc == 2 ? stdout : stderr);
    return argc == 2 ? 0 : 2;
  }
  nlohmann::json doc;
  try {
    if (std::string(argv[1]) == "-") {
      doc = nlohmann::json::parse(std::cin);
    } else {
      std::ifstream in(argv[1]);
      if (!in) {
        std::fprintf(stderr, "iorelay-sim-joint: cannot read %s\n", argv[1]);
        return 2;
      }
      doc = nlohmann::json::parse(in);
    }
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "iorelay-sim-joint: not JSON: %s\n", e.what());
    return 2;
  }
  auto config = iorelay::sim::ParseJointConfig(doc);
  if (!config.ok()) {
    std::fprintf(stderr, "iorelay-sim-joint: %s\n", config.status().message().c_str());
    return 2;
  }
  auto result = iorelay::sim::RunJoint(*config);
  if (!result.ok()) {
    std::fprintf(stderr, "iorelay-sim-joint: %s\n", result.status().message().c_str());
    return result.status().code() == EINVAL ? 2 : 1;
  }
  std::printf("%s\n", iorelay::sim::JointJson(*config, *result).dump(2).c_str());
  return 0;
}
