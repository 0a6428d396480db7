// TWINS: one queue per target data server; with one local backend the target is the file
// (by=file, default) or, as the variant, the application (by=app). Time is cut into windows;
// only the current queue is served; queues rotate round-robin; an empty current queue
// answers kSleepUntil the end of its window.
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "sched/algorithms.h"
#include "sched/run_queue.h"

namespace iorelay::sched {
namespace {

class TwinsScheduler final : public Scheduler {
 public:
  TwinsScheduler(DispatchLimits limits, int64_t window_ns, bool by_app, nlohmann::json config)
      : limits_(limits), window_ns_(window_ns), by_app_(by_app), config_(std::move(config)) {}
  const char* name() const override { return "twins"; }
  void Add(const Request& r) override {
    Target t = by_app_ ? Target{r.app, 0} : Target{r.file.dev, r.file.ino};
    auto [it, fresh] = queues_.try_emplace(t);
    if (fresh) it->second.cursor = KeyOf(r, 0);
    it->second.rq.Add(r, next_seq_++);
    ++queued_;
  }
  Decision Next(int64_t now_ns, Dispatch* out) override;
  void Release(uint64_t, int, int64_t) override {}
  size_t queued() const override { return queued_; }
  nlohmann::json EffectiveConfig() const override { return config_; }
  // (Its queues are non-empty ones only: nothing to remove.)
  std::vector<uint32_t> AppsHeld() const override {
    std::vector<uint32_t> held;
    if (!by_app_) return held;
    for (const auto& [target, q] : queues_) held.push_back(static_cast<uint32_t>(target.first));
    return held;
  }

 private:
  using Target = std::pair<uint64_t, uint64_t>;
  struct Queue {
    RunQueue rq;
    QueueKey cursor;  // elevator position inside the queue
  };

  DispatchLimits limits_;
  int64_t window_ns_;
  bool by_app_;
  nlohmann::json config_;
  std::map<Target, Queue> queues_;  // non-empty queues, in round-robin order
  bool started_ = false;
  Target current_{};
  int64_t window_end_ns_ = 0;
  uint64_t next_seq_ = 1;
  size_t queued_ = 0;
};

Decision TwinsScheduler::Next(int64_t now_ns, Dispatch* out) {
  if (queues_.empty()) return Decision{Decision::Kind::kIdle, 0};
  if (!started_ || now_ns >= window_end_ns_) {
    // The next window: the next queue after the current one, round-robin.
    auto it = started_ ? queues_.upper_bound(current_) : queues_.begin();
    if (it == queues_.end()) it = queues_.begin();
    current_ = it->first;
    const bool in_step = started_ && now_ns < window_end_ns_ + window_ns_;
    window_end_ns_ = (in_step ? window_end_ns_ : now_ns) + window_ns_;
    started_ = true;
  }
  auto it = queues_.find(current_);
  if (it == queues_.end()) return Decision{Decision::Kind::kSleepUntil, window_end_ns_};
  Queue& q = it->second;
  RunQueue::Iter head = q.rq.AtOrAfter(q.cursor);
  q.cursor = head.stream();
  q.rq.TakeRun(head, UINT64_MAX, limits_, out);
  q.cursor.offset = out->offset + out->length;
  queued_ -= out->request_ids.size();
  if (q.rq.empty()) queues_.erase(it);
  return Decision{Decision::Kind::kDispatch, 0};
}

}  // namespace

SchedulerResult MakeTwins(const SchedulerParams& params) {
  ParamReader reader("twins", params);
  DispatchLimits limits = ReadLimits(&reader);
  int64_t window_ns = reader.DurationNs("window", 2'000'000);
  std::string by = reader.Text("by", "file");
  IORELAY_RETURN_IF_ERROR(reader.Finish());
  if (window_ns <= 0) return Status::InvalidArgument("twins: window must be > 0");
  if (by != "file" && by != "app") return Status::InvalidArgument("twins: by must be file|app");
  return std::unique_ptr<Scheduler>(
      std::make_unique<TwinsScheduler>(limits, window_ns, by == "app", reader.effective()));
}

}  // namespace iorelay::sched
