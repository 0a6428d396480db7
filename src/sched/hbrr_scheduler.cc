// HBRR (IOFSL's "merge" scheduler): one queue per (file, direction, merge_class) holding an
// offset-ordered range set; queues rotate round-robin, each turn allowing `quantum`
// dequeues; each dequeue is a batch of up to `batch` contiguous requests issued as one call.
#include <map>
#include <nlohmann/json.hpp>

#include "sched/algorithms.h"
#include "sched/run_queue.h"

namespace iorelay::sched {
namespace {

class HbrrScheduler final : public Scheduler {
 public:
  HbrrScheduler(DispatchLimits limits, uint64_t quantum, nlohmann::json config)
      : limits_(limits), quantum_(quantum), config_(std::move(config)) {}
  const char* name() const override { return "hbrr"; }
  void Add(const Request& r) override {
    const QueueKey stream = StreamOf(KeyOf(r, 0));
    auto [it, fresh] = queues_.try_emplace(stream);
    if (fresh) it->second.cursor = stream;
    it->second.rq.Add(r, next_seq_++);
    ++queued_;
  }
  Decision Next(int64_t, Dispatch* out) override {
    if (queues_.empty()) return Decision{Decision::Kind::kIdle, 0};
    auto it = queues_.find(current_);
    if (it == queues_.end() || left_ == 0) {
      it = queues_.upper_bound(current_);
      if (it == queues_.end()) it = queues_.begin();
      current_ = it->first;
      left_ = quantum_;
    }
    Queue& q = it->second;
    const uint64_t run = q.rq.TakeRun(q.rq.AtOrAfter(q.cursor), UINT64_MAX, limits_, out);
    q.cursor.offset = out->offset + run;
    --left_;
    queued_ -= out->request_ids.size();
    if (q.rq.empty()) queues_.erase(it);
    return Decision{Decision::Kind::kDispatch, 0};
  }
  void Release(uint64_t, int, int64_t) override {}
  size_t queued() const override { return queued_; }
  nlohmann::json EffectiveConfig() const override { return config_; }

 private:
  struct Queue {
    RunQueue rq;
    QueueKey cursor;
  };
  DispatchLimits limits_;  // max_requests is the batch size
  uint64_t quantum_;
  nlohmann::json config_;
  std::map<QueueKey, Queue> queues_;  // non-empty queues, the round-robin ring
  QueueKey current_;
  uint64_t left_ = 0;  // dequeues left in the current turn
  uint64_t next_seq_ = 1;
  size_t queued_ = 0;
};

}  // namespace

SchedulerResult MakeHbrr(const SchedulerParams& params) {
  ParamReader reader("hbrr", params);
  DispatchLimits limits = ReadLimits(&reader);
  uint64_t quantum = std::max<uint64_t>(1, reader.Count("quantum", 4));
  uint64_t batch = std::max<uint64_t>(1, reader.Count("batch", 32));
  IORELAY_RETURN_IF_ERROR(reader.Finish());
  limits.max_requests = static_cast<uint32_t>(std::min<uint64_t>(batch, limits.max_requests));
  return std::unique_ptr<Scheduler>(
      std::make_unique<HbrrScheduler>(limits, quantum, reader.effective()));
}

}  // namespace iorelay::sched
