// SJF: serve the file queue (file, op, merge_class) with the fewest queued bytes, from its
// lowest offset, merging contiguous requests. Aging bounds starvation: once the oldest
// queued request has waited max_wait, its queue is served first, from that request.
#include <absl/container/btree_set.h>
#include <absl/container/node_hash_map.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "sched/algorithms.h"
#include "sched/run_queue.h"

namespace iorelay::sched {
namespace {

class SjfScheduler final : public Scheduler {
 public:
  SjfScheduler(DispatchLimits limits, int64_t max_wait_ns, nlohmann::json config)
      : limits_(limits), max_wait_ns_(max_wait_ns), config_(std::move(config)) {}
  const char* name() const override { return "sjf"; }
  void Add(const Request& r) override;
  Decision Next(int64_t now_ns, Dispatch* out) override;
  void Release(uint64_t, int, int64_t) override {}
  size_t queued() const override { return queued_; }
  nlohmann::json EffectiveConfig() const override { return config_; }

 private:
  struct Queue;
  // The indexes carry the queue's address (queues_ is node-based) so that a decision needs
  // no lookup; it never decides an order: stream keys and seqs are unique.
  using BytesKey = std::tuple<uint64_t, QueueKey, Queue*>;  // (queued bytes, stream)
  using AgeKey = std::tuple<int64_t, uint64_t, Queue*>;     // (arrival, seq) of the oldest
  struct Queue {
    RunQueue rq{/*track_arrival=*/true};
    BytesKey bytes_key;       // entry in by_bytes_
    AgeKey age_key;           // entry in by_age_
    bool dispatched = false;  // in dispatched_: its bytes_key may over-state it
  };
  void IndexAge(Queue& q);
  // Moves the queue's by_bytes_ entry to its current size.
  void RekeyBytes(Queue& q);
  // The queue with the fewest queued bytes (ties: lowest stream key).
  Queue& Shortest();

  DispatchLimits limits_;
  int64_t max_wait_ns_;
  nlohmann::json config_;
  absl::node_hash_map<QueueKey, Queue> queues_;  // non-empty queues
  // (queued bytes, stream) of every non-empty queue, kept lazily: an Add leaves its queue's
  // entry as it was (it then under-states the queue), and a dispatch only lists its queue in
  // dispatched_. Shortest re-keys the listed queues, then refreshes under-stated entries as
  // they reach the front, which finds the true minimum. Aged dispatches, which do not look
  // at sizes, thus pay nothing for this index.
  absl::btree_set<BytesKey> by_bytes_;
  std::vector<Queue*> dispatched_;
  absl::btree_set<AgeKey> by_age_;
  uint64_t next_seq_ = 1;
  size_t queued_ = 0;
};

void SjfScheduler::IndexAge(Queue& q) {
  const auto [arrival_ns, seq] = q.rq.OldestArrival();
  q.age_key = {arrival_ns, seq, &q};
  by_age_.insert(q.age_key);
}

void SjfScheduler::RekeyBytes(Queue& q) {
  by_bytes_.erase(q.bytes_key);
  std::get<0>(q.bytes_key) = q.rq.bytes();
  by_bytes_.insert(q.bytes_key);
}

SjfScheduler::Queue& SjfScheduler::Shortest() {
  for (Queue* q : dispatched_) {
    RekeyBytes(*q);
    q->dispatched = false;
  }
  dispatched_.clear();
  for (;;) {
    Queue& q = *std::get<2>(*by_bytes_.begin());
    if (std::get<0>(q.bytes_key) == q.rq.bytes()) return q;
    RekeyBytes(q);
  }
}

void SjfScheduler::Add(const Request& r) {
  const QueueKey stream = StreamOf(KeyOf(r, 0));
  Queue& q = queues_.try_emplace(stream).first->second;
  // A new request is the queue's newest: only a queue that was empty gets index entries.
  const bool fresh = q.rq.empty();
  q.rq.Add(r, next_seq_++);
  if (fresh) {
    q.bytes_key = {q.rq.bytes(), stream, &q};
    by_bytes_.insert(q.bytes_key);
    IndexAge(q);
  }
  ++queued_;
}

Decision SjfScheduler::Next(int64_t now_ns, Dispatch* out) {
  if (by_age_.empty()) return Decision{Decision::Kind::kIdle, 0};
  const auto& oldest = *by_age_.begin();
  const bool aged = now_ns - std::get<0>(oldest) >= max_wait_ns_;
  Queue& q = aged ? *std::get<2>(oldest) : Shortest();
  by_age_.erase(q.age_key);
  RunQueue::Iter start = aged ? q.rq.Oldest() : q.rq.begin();
  q.rq.TakeRun(start, UINT64_MAX, limits_, out);
  queued_ -= out->request_ids.size();
  if (q.rq.empty()) {
    by_bytes_.erase(q.bytes_key);
    if (q.dispatched) dispatched_.erase(std::find(dispatched_.begin(), dispatched_.end(), &q));
    const QueueKey stream = std::get<1>(q.bytes_key);  // a copy: the erase destroys q
    queues_.erase(stream);
  } else {
    IndexAge(q);
    if (!q.dispatched) {
      q.dispatched = true;
      dispatched_.push_back(&q);
    }
  }
  return Decision{Decision::Kind::kDispatch, 0};
}

}  // namespace

SchedulerResult MakeSjf(const SchedulerParams& params) {
  ParamReader reader("sjf", params);
  DispatchLimits limits = ReadLimits(&reader);
  int64_t max_wait_ns = reader.DurationNs("max_wait", 100'000'000);
  IORELAY_RETURN_IF_ERROR(reader.Finish());
  return std::unique_ptr<Scheduler>(
      std::make_unique<SjfScheduler>(limits, max_wait_ns, reader.effective()));
}

}  // namespace iorelay::sched
