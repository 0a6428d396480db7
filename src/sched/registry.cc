// The scheduler registry and the list of built-in algorithms.
#include "sched/registry.h"

#include "sched/algorithms.h"
#include "sched/gather.h"
#include "sched/write_order.h"

namespace iorelay::sched {

Status SchedulerRegistry::Register(const std::string& name, Factory factory) {
  return Register(
      name, ParamFactory([name, factory = std::move(factory)](
                             const SchedulerParams& params) -> Result<std::unique_ptr<Scheduler>> {
        if (!params.empty()) {
          return Status::InvalidArgument("scheduler '" + name + "' takes no parameters");
        }
        return factory();
      }));
}

Status SchedulerRegistry::Register(const std::string& name, ParamFactory factory) {
  if (!factories_.emplace(name, std::move(factory)).second) {
    return Status::FromErrno(EEXIST, "scheduler '" + name + "' registered twice");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Scheduler>> SchedulerRegistry::Create(const std::string& name) const {
  return Create(name, SchedulerParams{});
}

Result<std::unique_ptr<Scheduler>> SchedulerRegistry::Create(const std::string& name,
                                                             const SchedulerParams& params) const {
  auto it = factories_.find(name);
  if (it == factories_.end()) {
    std::string known;
    for (const auto& [n, f] : factories_) known += (known.empty() ? "" : ", ") + n;
    return Status::InvalidArgument("unknown scheduler '" + name + "' (known: " + known + ")");
  }
  // `gather` is every algorithm's: it wraps the algorithm (gather.h) rather than being read
  // by it.
  SchedulerParams own = params;
  SchedulerParams wrapper;
  if (auto g = own.extract("gather")) wrapper.insert(std::move(g));
  ParamReader reader(name, wrapper);
  const int64_t gather_ns = reader.DurationNs("gather", 0);
  IORELAY_RETURN_IF_ERROR(reader.Finish());
  auto s = it->second(own);
  if (!s.ok()) return s.status();
  std::unique_ptr<Scheduler> algorithm = std::move(*s);
  if (gather_ns > 0) algorithm = std::make_unique<Gather>(std::move(algorithm), gather_ns);
  return std::unique_ptr<Scheduler>(std::make_unique<WriteOrderGuard>(std::move(algorithm)));
}

Result<std::unique_ptr<Scheduler>> SchedulerRegistry::CreateFromSpec(std::string_view spec) const {
  auto parsed = ParseSchedulerSpec(spec);
  if (!parsed.ok()) return parsed.status();
  return Create(parsed->name, parsed->params);
}

std::vector<std::string> SchedulerRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [n, f] : factories_) names.push_back(n);
  return names;
}

void RegisterBuiltinSchedulers(SchedulerRegistry* registry) {
  (void)registry->Register("fifo", MakeFifo);
  (void)registry->Register("to-agg", MakeToAgg);
  (void)registry->Register("sjf", MakeSjf);
  (void)registry->Register("aioli", MakeAioli);
  (void)registry->Register("mlf", MakeMlf);
  (void)registry->Register("sw", MakeSw);
  (void)registry->Register("twins", MakeTwins);
  (void)registry->Register("wfq", MakeWfq);
  (void)registry->Register("hbrr", MakeHbrr);
  (void)registry->Register("dynamic", MakeDynamic);
}

}  // namespace iorelay::sched
