// Schedulers chosen by name (--scheduler). Registration is an explicit call, so a program
// knows exactly which algorithms it carries; no static constructors.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sched/params.h"
#include "sched/scheduler.h"

namespace iorelay::sched {

class SchedulerRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Scheduler>()>;
  // Builds from parameters; fails (EINVAL) on unknown parameters or bad values.
  using ParamFactory = std::function<Result<std::unique_ptr<Scheduler>>(const SchedulerParams&)>;
  // Fails (EEXIST) when `name` is taken. A Factory accepts no parameters.
  Status Register(const std::string& name, Factory factory);
  Status Register(const std::string& name, ParamFactory factory);
  // Fails (EINVAL, listing the known names) for an unknown name. Every scheduler created
  // here is wrapped in a WriteOrderGuard (overlapping writes keep arrival order).
  Result<std::unique_ptr<Scheduler>> Create(const std::string& name) const;
  Result<std::unique_ptr<Scheduler>> Create(const std::string& name,
                                            const SchedulerParams& params) const;
  // "aioli:quantum=64KiB,max_quantum=4MiB" or {"name":"aioli","quantum":"64KiB"}.
  Result<std::unique_ptr<Scheduler>> CreateFromSpec(std::string_view spec) const;
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, ParamFactory> factories_;
};

// Registers every built-in algorithm: fifo, to-agg, sjf, aioli, mlf, sw, twins, wfq,
// hbrr, dynamic.
void RegisterBuiltinSchedulers(SchedulerRegistry* registry);

}  // namespace iorelay::sched
