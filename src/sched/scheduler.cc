// Default implementations of the optional Scheduler methods.
#include "sched/scheduler.h"

#include <nlohmann/json.hpp>

namespace iorelay::sched {

nlohmann::json Scheduler::EffectiveConfig() const { return nlohmann::json{{"name", name()}}; }

}  // namespace iorelay::sched
