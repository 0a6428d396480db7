// WFQ / DRR: per-application deficit round-robin. Each turn adds weight x quantum bytes of
// credit; an application is served while its next run fits its credit; credit is kept only
// while its queue is non-empty. Inside an application, elevator order with merging.
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "sched/algorithms.h"
#include "sched/run_queue.h"

namespace iorelay::sched {
namespace {

class WfqScheduler final : public Scheduler {
 public:
  WfqScheduler(DispatchLimits limits, uint64_t quantum, std::map<uint32_t, uint32_t> weights,
               nlohmann::json config)
      : limits_(limits),
        quantum_(quantum),
        weights_(std::move(weights)),
        config_(std::move(config)) {}
  const char* name() const override { return "wfq"; }
  void Add(const Request& r) override {
    auto [it, fresh] = apps_.try_emplace(r.app);
    if (fresh) it->second.cursor = KeyOf(r, 0);
    it->second.rq.Add(r, next_seq_++);
    ++queued_;
  }
  Decision Next(int64_t now_ns, Dispatch* out) override;
  void Release(uint64_t, int, int64_t) override {}
  size_t queued() const override { return queued_; }
  nlohmann::json EffectiveConfig() const override {
    nlohmann::json j = config_;
    j["weights"] = WeightsJson(weights_);  // SetAppWeight included
    return j;
  }
  void SetAppWeight(uint32_t app, uint32_t weight) override {
    weights_[app] = std::max<uint32_t>(1, weight);
  }
  void RemoveApp(uint32_t app) override {
    // Its queued requests keep its weight until they are served; then both go (Next).
    if (apps_.contains(app)) {
      removed_.insert(app);
    } else {
      weights_.erase(app);
    }
  }
  std::vector<uint32_t> AppsHeld() const override {
    std::set<uint32_t> held;
    for (const auto& [app, w] : weights_) held.insert(app);
    for (const auto& [app, q] : apps_) held.insert(app);
    return {held.begin(), held.end()};
  }

 private:
  struct AppQueue {
    RunQueue rq;
    QueueKey cursor;
    uint64_t deficit = 0;  // bytes
  };
  uint64_t Weight(uint32_t app) const {
    auto it = weights_.find(app);
    return it == weights_.end() ? 1 : it->second;
  }

  DispatchLimits limits_;
  uint64_t quantum_;
  std::map<uint32_t, uint32_t> weights_;
  nlohmann::json config_;
  std::map<uint32_t, AppQueue> apps_;  // non-empty queues: the round-robin ring
  std::set<uint32_t> removed_;         // removed apps whose queue is not empty yet
  uint32_t current_ = 0;
  bool in_turn_ = false;  // current_ has received its credit for this turn
  uint64_t next_seq_ = 1;
  size_t queued_ = 0;
};

Decision WfqScheduler::Next(int64_t, Dispatch* out) {
  if (apps_.empty()) return Decision{Decision::Kind::kIdle, 0};
  for (;;) {
    if (!in_turn_) {
      auto it = apps_.upper_bound(current_);
      if (it == apps_.end()) it = apps_.begin();
      current_ = it->first;
      it->second.deficit += Weight(current_) * quantum_;
      in_turn_ = true;
    }
    auto it = apps_.find(current_);
    AppQueue& a = it->second;
    RunQueue::Iter head = a.rq.AtOrAfter(a.cursor);
    if (a.rq.at(head).req.length > a.deficit) {
      in_turn_ = false;  // credit kept for the next round
      continue;
    }
    a.cursor = head.stream();
    const uint64_t run = a.rq.TakeRun(head, a.deficit, limits_, out);
    a.cursor.offset = out->offset + run;
    a.deficit -= run;
    queued_ -= out->request_ids.size();
    if (a.rq.empty()) {
      apps_.erase(it);  // credit is dropped with the queue
      in_turn_ = false;
      if (removed_.erase(current_) != 0) weights_.erase(current_);
    }
    return Decision{Decision::Kind::kDispatch, 0};
  }
}

}  // namespace

SchedulerResult MakeWfq(const SchedulerParams& params) {
  ParamReader reader("wfq", params);
  DispatchLimits limits = ReadLimits(&reader);
  uint64_t quantum = std::max<uint64_t>(1, reader.Bytes("quantum", 64 << 10));
  auto weights = reader.Weights();
  IORELAY_RETURN_IF_ERROR(reader.Finish());
  return std::unique_ptr<Scheduler>(
      std::make_unique<WfqScheduler>(limits, quantum, std::move(weights), reader.effective()));
}

}  // namespace iorelay::sched
