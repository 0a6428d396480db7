// aIOLi (Lebre et al. 2006): per (file, op, merge_class) queues in offset order; a head is
// eligible once factor x base quantum covers it (factors double per pass, computed lazily
// from the pass a request was queued at); the oldest eligible head wins (reads first); the
// chosen queue is served one contiguous run within its adaptive quantum.
#include <absl/container/btree_set.h>
#include <absl/container/flat_hash_map.h>
#include <absl/container/node_hash_map.h>

#include <list>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "sched/algorithms.h"
#include "sched/quantum.h"
#include "sched/run_queue.h"

namespace iorelay::sched {
namespace {

struct AioliConfig : QuantumParams {
  DispatchLimits limits;
  int64_t wait_ns = 900'000;  // short wait on a shift or a shrinking offer
  bool sync = true;           // a queue's next dispatch waits for the previous
  std::map<uint32_t, uint32_t> weights;
};

class AioliScheduler final : public Scheduler {
 public:
  AioliScheduler(AioliConfig c, nlohmann::json config)
      : c_(std::move(c)), config_(std::move(config)) {}
  const char* name() const override { return "aioli"; }
  void Add(const Request& r) override;
  Decision Next(int64_t now_ns, Dispatch* out) override;
  void Release(uint64_t id, int, int64_t) override;
  size_t queued() const override { return queued_; }
  nlohmann::json EffectiveConfig() const override;
  void SetAppWeight(uint32_t app, uint32_t weight) override {
    c_.weights[app] = std::max<uint32_t>(1, weight);
  }
  // (Queues are per stream, not per application: the weight goes at once, and requests of the
  // application still queued count with weight 1.)
  void RemoveApp(uint32_t app) override { c_.weights.erase(app); }
  std::vector<uint32_t> AppsHeld() const override {
    std::vector<uint32_t> held;
    for (const auto& [app, w] : c_.weights) held.push_back(app);
    return held;
  }

 private:
  enum class Where { kNone, kNotYet, kEligible, kHeld };
  struct Queue;
  // The indexes name a queue by its address (queues_ is node-based, and a queue is dropped
  // only when detached). The address never decides an order: eligible heads have unique seqs,
  // and the other two indexes are only asked for their smallest time or pass.
  using EligibleKey = std::tuple<int, int64_t, uint64_t, Queue*>;
  struct Queue {
    RunQueue rq;
    QueueKey stream;
    QueueKey cursor;  // stream + offset where the last dispatch ended
    bool served = false;
    uint64_t quantum = 0;
    uint64_t last_run_bytes = 0;
    bool shift = false;      // a request arrived below the cursor since the last dispatch
    bool hold_used = false;  // held once already since the last dispatch
    int64_t hold_until_ns = 0;
    uint32_t in_flight = 0;
    bool idle = false;                  // nothing queued, nothing in flight
    std::list<QueueKey>::iterator lru;  // in idle_ while idle
    Where where = Where::kNone;
    std::pair<uint64_t, Queue*> not_yet_key;
    EligibleKey eligible_key;
    std::pair<int64_t, Queue*> held_key;
  };
  void Detach(Queue& q);
  void Attach(Queue& q);
  bool ShouldHold(Queue& q, const Queued& head) const;
  RunQueue::Iter Head(Queue& q) { return c_.elevator() ? q.rq.AtOrAfter(q.cursor) : q.rq.begin(); }
  // Files `q` among the idle streams when it has nothing queued or in flight, dropping the
  // least recently idle beyond c_.idle_streams (maybe `q` itself: do not use it after).
  void MaybeIdle(Queue& q);
  uint32_t Weight(uint32_t app) const {
    auto it = c_.weights.find(app);
    return it == c_.weights.end() ? 1 : it->second;
  }

  AioliConfig c_;
  nlohmann::json config_;
  // Active streams and at most c_.idle_streams idle ones.
  absl::node_hash_map<QueueKey, Queue> queues_;
  std::list<QueueKey> idle_;                              // idle streams, most recently idle first
  absl::btree_set<std::pair<uint64_t, Queue*>> not_yet_;  // (pass its head becomes eligible)
  absl::btree_set<EligibleKey> eligible_;                 // (write?, head arrival, head seq)
  absl::btree_set<std::pair<int64_t, Queue*>> held_;      // (end of the short wait)
  absl::flat_hash_map<uint64_t, Queue*> in_flight_;
  uint64_t pass_ = 0;
  uint64_t next_seq_ = 1;
  int64_t last_now_ns_ = INT64_MIN;
  size_t queued_ = 0;
};

void AioliScheduler::Detach(Queue& q) {
  switch (q.where) {
    case Where::kNotYet:
      not_yet_.erase(q.not_yet_key);
      break;
    case Where::kEligible:
      eligible_.erase(q.eligible_key);
      break;
    case Where::kHeld:
      held_.erase(q.held_key);
      break;
    case Where::kNone:
      break;
  }
  q.where = Where::kNone;
}

void AioliScheduler::Attach(Queue& q) {
  if (q.rq.empty() || (c_.sync && q.in_flight > 0)) return;
  if (q.hold_until_ns > last_now_ns_) {
    q.held_key = {q.hold_until_ns, &q};
    held_.insert(q.held_key);
    q.where = Where::kHeld;
    return;
  }
  const Queued& head = q.rq.at(Head(q));
  const uint64_t eligible_pass = head.tag + DoublingsToCover(head.req.length, c_.quantum);
  if (eligible_pass <= pass_) {
    q.eligible_key = {head.req.op == IoOp::kWrite, head.req.arrival_ns, head.seq, &q};
    eligible_.insert(q.eligible_key);
    q.where = Where::kEligible;
  } else {
    q.not_yet_key = {eligible_pass, &q};
    not_yet_.insert(q.not_yet_key);
    q.where = Where::kNotYet;
  }
}

void AioliScheduler::Add(const Request& r) {
  const QueueKey stream = StreamOf(KeyOf(r, 0));
  auto [it, fresh] = queues_.try_emplace(stream);
  Queue& q = it->second;
  if (fresh) {
    q.stream = q.cursor = stream;
    q.quantum = std::clamp(c_.quantum, c_.min_quantum, c_.max_quantum);
  } else if (q.idle) {
    idle_.erase(q.lru);
    q.idle = false;
  }
  if (q.served && r.offset < q.cursor.offset) q.shift = true;
  ++queued_;
  const RunQueue::Iter added = q.rq.Add(r, next_seq_++, pass_);
  // An index entry depends on the queue's head only: a held queue stays held, and an indexed
  // one changes only if the new request is its head now.
  if (q.where == Where::kHeld) return;
  if (q.where != Where::kNone && !(Head(q) == added)) return;
  Detach(q);
  Attach(q);
}

bool AioliScheduler::ShouldHold(Queue& q, const Queued& head) const {
  if (c_.wait_ns <= 0 || !q.served || q.hold_used) return false;
  // (a) A slower process behind: only in elevator order (in offset order its request is
  // already the head, below the cursor).
  if (q.shift && head.req.offset > q.cursor.offset) return true;
  const uint64_t offered = head.req.mergeable
                               ? q.rq.ContiguousBytesAt(q.stream, head.req.offset, q.last_run_bytes)
                               : head.req.length;
  return offered < q.last_run_bytes;  // the last dispatch aggregated more than the head offers
}

Decision AioliScheduler::Next(int64_t now_ns, Dispatch* out) {
  last_now_ns_ = std::max(last_now_ns_, now_ns);
  while (!held_.empty() && held_.begin()->first <= now_ns) {
    Queue& q = *held_.begin()->second;
    Detach(q);
    Attach(q);
  }
  for (;;) {
    while (!not_yet_.empty() && not_yet_.begin()->first <= pass_) {
      Queue& q = *not_yet_.begin()->second;
      Detach(q);
      Attach(q);
    }
    if (eligible_.empty()) {
      if (!not_yet_.empty()) {  // empty passes until the first head is covered
        pass_ = not_yet_.begin()->first;
        continue;
      }
      if (!held_.empty()) return Decision{Decision::Kind::kSleepUntil, held_.begin()->first};
      return Decision{Decision::Kind::kIdle, 0};
    }
    Queue& q = *std::get<3>(*eligible_.begin());
    RunQueue::Iter head = Head(q);
    if (ShouldHold(q, q.rq.at(head))) {
      q.hold_used = true;
      q.hold_until_ns = now_ns + c_.wait_ns;
      Detach(q);
      Attach(q);
      continue;
    }
    Detach(q);
    const uint32_t w = Weight(q.rq.at(head).req.app);
    const uint64_t quantum = q.quantum * w;
    const uint64_t run = q.rq.TakeRun(head, quantum, c_.limits, out);
    const uint64_t more = q.rq.ContiguousBytesAt(q.stream, out->offset + run, 2 * quantum);
    q.quantum = AdaptQuantum(q.quantum, (run + more) / w, c_.min_quantum, c_.max_quantum);
    q.cursor.offset = out->offset + run;
    q.served = true;
    q.last_run_bytes = run;
    q.shift = false;
    q.hold_used = false;
    q.hold_until_ns = 0;
    ++pass_;
    queued_ -= out->request_ids.size();
    if (c_.sync) {
      q.in_flight += static_cast<uint32_t>(out->request_ids.size());
      for (uint64_t id : out->request_ids) in_flight_[id] = &q;
    }
    Attach(q);
    MaybeIdle(q);
    return Decision{Decision::Kind::kDispatch, 0};
  }
}

void AioliScheduler::Release(uint64_t id, int, int64_t) {
  auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return;
  Queue& q = *it->second;
  in_flight_.erase(it);
  if (--q.in_flight == 0) {
    Detach(q);
    Attach(q);
    MaybeIdle(q);
  }
}

void AioliScheduler::MaybeIdle(Queue& q) {
  if (q.idle || !q.rq.empty() || q.in_flight > 0) return;
  q.idle = true;
  q.lru = idle_.insert(idle_.begin(), q.stream);
  while (idle_.size() > c_.idle_streams) {
    queues_.erase(idle_.back());
    idle_.pop_back();
  }
}

nlohmann::json AioliScheduler::EffectiveConfig() const {
  nlohmann::json j = config_;
  j["weights"] = WeightsJson(c_.weights);  // SetAppWeight included
  j["state"] = {{"streams", queues_.size()}, {"idle_streams", idle_.size()}};
  return j;
}

}  // namespace

SchedulerResult MakeAioli(const SchedulerParams& params) {
  ParamReader reader("aioli", params);
  AioliConfig c;
  c.limits = ReadLimits(&reader);
  ReadQuantumParams(&reader, &c);
  c.wait_ns = reader.DurationNs("wait", c.wait_ns);
  c.sync = reader.Flag("sync", c.sync);
  c.weights = reader.Weights();
  IORELAY_RETURN_IF_ERROR(reader.Finish());
  IORELAY_RETURN_IF_ERROR(CheckQuantumParams("aioli", c));
  return std::unique_ptr<Scheduler>(std::make_unique<AioliScheduler>(c, reader.effective()));
}

}  // namespace iorelay::sched
