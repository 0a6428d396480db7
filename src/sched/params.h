// Per-scheduler parameters: "aioli:quantum=64KiB,max_quantum=4MiB" or the JSON object
// {"name":"aioli","quantum":"64KiB"}; every parameter has a default, unknown names are errors.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace iorelay::sched {

// name -> value text, as written by the user (units inside the value).
using SchedulerParams = std::map<std::string, std::string>;

struct SchedulerSpec {
  std::string name;
  SchedulerParams params;
};

// "name" | "name:key=value,key=value" | a JSON object with "name" and the parameters
// (numbers and strings; "weights": {"<app>": <weight>} becomes weight.<app>; "state", the
// run-time state an EffectiveConfig() shows, is ignored so a printed config reads back).
Result<SchedulerSpec> ParseSchedulerSpec(std::string_view text);

// How EffectiveConfig() shows weights: {"<app>": weight}, the form the JSON spec reads.
nlohmann::json WeightsJson(const std::map<uint32_t, uint32_t>& weights);

// Reads typed parameters with defaults, recording the effective value of each (defaults
// filled in) and which names were read; Finish() reports bad values and unknown names.
class ParamReader {
 public:
  ParamReader(std::string name, const SchedulerParams& params);
  uint64_t Bytes(const std::string& key, uint64_t def);
  int64_t DurationNs(const std::string& key, int64_t def);
  uint64_t Count(const std::string& key, uint64_t def);  // a plain non-negative integer
  double Number(const std::string& key, double def);
  bool Flag(const std::string& key, bool def);  // true/false/1/0/yes/no
  std::string Text(const std::string& key, const std::string& def);
  // Every "weight.<app>=<integer ≥ 1>" entry, app -> weight.
  std::map<uint32_t, uint32_t> Weights();
  // OK, or EINVAL naming every bad value and unknown parameter.
  Status Finish() const;
  const nlohmann::json& effective() const { return effective_; }

 private:
  const std::string* Find(const std::string& key);
  void Fail(const std::string& key, const std::string& why);

  std::string name_;
  const SchedulerParams& params_;
  std::map<std::string, bool> used_;
  nlohmann::json effective_;
  std::string errors_;
};

}  // namespace iorelay::sched
