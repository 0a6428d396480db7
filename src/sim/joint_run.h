// Several jobs in one simulation: each job has its own compute nodes, ranks, files and I/O
// nodes, and all of them share the network's switch and the storage, so they slow each other
// as concurrent jobs on one machine do. What the arbiter's isolated predictions are checked
// against (bench/arbiter_sim.py). Star network and per-rank issuers only.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/platform.h"
#include "sim/workload_pattern.h"

namespace iorelay::sim {

struct JointJob {
  PatternSpec pattern;
  int ionodes = 0;     // this job's own I/O nodes; 0: direct access
  double start_s = 0;  // when its ranks start (plus the platform's start jitter)
};

struct JointConfig {
  Platform platform;
  std::vector<JointJob> jobs;
  std::string scheduler = "fifo";  // every I/O node's (a src/sched registry spec)
  std::string placement = "block";
  uint64_t seed = 1;
  std::string context_factory;  // as RunConfig's
};

struct JointJobResult {
  uint64_t requests = 0;
  uint64_t bytes = 0;
  int errors = 0;
  double start_s = 0;
  double end_s = 0;  // its slowest rank's last completion
};

// InvalidArgument for no jobs, a bad pattern, scheduler or placement, or a platform with a
// topology (the joint run builds the star network only); IOError if ranks were left waiting.
// One engine per process, as Run.
Result<std::vector<JointJobResult>> RunJoint(const JointConfig& config);

// {"platform", "scheduler", "seed", "jobs": [{pattern, ionodes, start_s, requests, bytes,
// errors, end_s, bandwidth_MiBps (bytes over end - start)}]}.
nlohmann::json JointJson(const JointConfig& config, const std::vector<JointJobResult>& results);

// The joint run's input as JSON: {"platform": PATH, "scheduler", "placement", "seed", "jobs":
// [{"layout", "spatiality", "operation", "odirect", "request", "total", "max_requests",
// "ranks", "nodes", "ionodes", "start"}]}, sizes and durations in the units rule.
Result<JointConfig> ParseJointConfig(const nlohmann::json& doc);

}  // namespace iorelay::sim
