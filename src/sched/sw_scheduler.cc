// SW / TW (time windows): order by (arrival window, application); within a window all
// requests of one application go before the next application's, merged when contiguous.
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "sched/algorithms.h"
#include "sched/run_queue.h"

namespace iorelay::sched {
namespace {

class SwScheduler final : public Scheduler {
 public:
  SwScheduler(DispatchLimits limits, int64_t window_ns, nlohmann::json config)
      : limits_(limits), window_ns_(window_ns), config_(std::move(config)) {}
  const char* name() const override { return "sw"; }
  void Add(const Request& r) override {
    const int64_t window = r.arrival_ns < 0 ? 0 : r.arrival_ns / window_ns_;
    groups_[{window, r.app}].Add(r, next_seq_++);
    ++queued_;
  }
  Decision Next(int64_t, Dispatch* out) override {
    if (groups_.empty()) return Decision{Decision::Kind::kIdle, 0};
    auto g = groups_.begin();
    g->second.TakeRun(g->second.begin(), UINT64_MAX, limits_, out);
    queued_ -= out->request_ids.size();
    if (g->second.empty()) groups_.erase(g);
    return Decision{Decision::Kind::kDispatch, 0};
  }
  void Release(uint64_t, int, int64_t) override {}
  size_t queued() const override { return queued_; }
  nlohmann::json EffectiveConfig() const override { return config_; }
  // (Its groups are non-empty queues only: nothing to remove.)
  std::vector<uint32_t> AppsHeld() const override {
    std::set<uint32_t> held;
    for (const auto& [key, q] : groups_) held.insert(key.second);
    return {held.begin(), held.end()};
  }

 private:
  DispatchLimits limits_;
  int64_t window_ns_;
  nlohmann::json config_;
  std::map<std::pair<int64_t, uint32_t>, RunQueue> groups_;  // (window, app) -> requests
  uint64_t next_seq_ = 1;
  size_t queued_ = 0;
};

}  // namespace

SchedulerResult MakeSw(const SchedulerParams& params) {
  ParamReader reader("sw", params);
  DispatchLimits limits = ReadLimits(&reader);
  int64_t window_ns = reader.DurationNs("window", 1'000'000'000);
  IORELAY_RETURN_IF_ERROR(reader.Finish());
  if (window_ns <= 0) return Status::InvalidArgument("sw: window must be > 0");
  return std::unique_ptr<Scheduler>(
      std::make_unique<SwScheduler>(limits, window_ns, reader.effective()));
}

}  // namespace iorelay::sched
