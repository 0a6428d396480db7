// Factories of the built-in algorithms (one .cc per algorithm); each reads its parameters
// with defaults and fails (EINVAL) on unknown names or bad values. See docs/schedulers.md.
#pragma once

#include <memory>

#include "common/status.h"
#include "sched/params.h"
#include "sched/scheduler.h"

namespace iorelay::sched {

using SchedulerResult = Result<std::unique_ptr<Scheduler>>;

SchedulerResult MakeFifo(const SchedulerParams& params);
SchedulerResult MakeToAgg(const SchedulerParams& params);
SchedulerResult MakeSjf(const SchedulerParams& params);
SchedulerResult MakeAioli(const SchedulerParams& params);
SchedulerResult MakeMlf(const SchedulerParams& params);
SchedulerResult MakeSw(const SchedulerParams& params);
SchedulerResult MakeTwins(const SchedulerParams& params);
SchedulerResult MakeWfq(const SchedulerParams& params);
SchedulerResult MakeHbrr(const SchedulerParams& params);
SchedulerResult MakeDynamic(const SchedulerParams& params);

}  // namespace iorelay::sched
