// MLF: aIOLi's factors and quanta without FCFS across files, without waits: queues (file, op,
// merge_class) are visited round-robin, and a queue serves the first request in offset order
// (from its lowest offset, or from its cursor with order=elevator) whose factor x base
// quantum covers it, not only its head.
#include <absl/container/btree_set.h>

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

struct MlfConfig : QuantumParams {
  DispatchLimits limits;
};

class MlfScheduler final : public Scheduler {
 public:
  MlfScheduler(MlfConfig c, nlohmann::json config) : c_(c), config_(std::move(config)) {}
  const char* name() const override { return "mlf"; }
  void Add(const Request& r) override;
  Decision Next(int64_t now_ns, Dispatch* out) override;
  void Release(uint64_t, int, int64_t) override {}
  size_t queued() const override { return queued_; }
  nlohmann::json EffectiveConfig() const override {
    nlohmann::json j = config_;
    j["state"] = {{"streams", quanta_.size()}, {"idle_streams", idle_.size()}};
    return j;
  }

 private:
  struct StreamState {
    uint64_t quantum = 0;
    uint64_t cursor = 0;  // where the stream's last dispatch ended (order=elevator)
    bool idle = false;
    std::list<QueueKey>::iterator lru;  // in idle_ while idle
  };
  // Eligibility is a property of the run-queue entry (its pass, in `tag`, and its length),
  // so the eligible requests need no index of their own: a queue is walked in offset order
  // from its start, skipping the entries in `not_yet`. Only requests longer than the base
  // quantum are ever there, and each for at most its number of doublings in passes.
  struct Queue {
    RunQueue rq;
    // The queued requests not yet covered at pass_ (once Promote ran): (pass, offset, seq).
    absl::btree_set<std::tuple<uint64_t, uint64_t, uint64_t>> not_yet;
    StreamState* state = nullptr;  // quanta_'s node: kept while the queue is not empty
    bool has_eligible() const { return rq.size() > not_yet.size(); }
  };
  uint64_t EligiblePass(const Queued& e) const {
    return e.tag + DoublingsToCover(e.req.length, c_.quantum);
  }
  void Promote(Queue& q) {
    while (!q.not_yet.empty() && std::get<0>(*q.not_yet.begin()) <= pass_) {
      q.not_yet.erase(q.not_yet.begin());
    }
  }

  MlfConfig c_;
  nlohmann::json config_;
  std::map<QueueKey, Queue> queues_;  // non-empty queues, the round-robin ring
  // Per stream: kept while its queue is non-empty, and for at most c_.idle_streams streams
  // (the most recently emptied) after, so a stream that comes back soon keeps its quantum.
  std::map<QueueKey, StreamState> quanta_;
  std::list<QueueKey> idle_;  // most recently emptied first
  QueueKey ring_cursor_;
  uint64_t pass_ = 0;
  uint64_t next_seq_ = 1;
  size_t queued_ = 0;
  std::vector<Queued> taken_;  // scratch of Next, capacity reused
};

void MlfScheduler::Add(const Request& r) {
  const QueueKey stream = StreamOf(KeyOf(r, 0));
  auto [it, fresh] = queues_.try_emplace(stream);
  Queue& q = it->second;
  if (fresh) {  // a stream's state is looked up only when its queue (re)appears
    auto [st, new_stream] = quanta_.try_emplace(stream);
    if (new_stream) {
      st->second.quantum = std::clamp(c_.quantum, c_.min_quantum, c_.max_quantum);
    } else if (st->second.idle) {
      idle_.erase(st->second.lru);
      st->second.idle = false;
    }
    q.state = &st->second;
  }
  const uint64_t seq = next_seq_++;
  RunQueue::Iter e = q.rq.Add(r, seq, pass_);
  const uint64_t p = EligiblePass(q.rq.at(e));
  if (p > pass_) q.not_yet.emplace(p, r.offset, seq);
  ++queued_;
}

Decision MlfScheduler::Next(int64_t, Dispatch* out) {
  if (queues_.empty()) return Decision{Decision::Kind::kIdle, 0};
  for (;;) {
    uint64_t first_pass = UINT64_MAX;
    auto it = queues_.upper_bound(ring_cursor_);
    for (size_t visited = 0; visited < queues_.size(); ++visited, ++it) {
      if (it == queues_.end()) it = queues_.begin();
      Queue& q = it->second;
      Promote(q);
      if (!q.has_eligible()) {
        first_pass = std::min(first_pass, std::get<0>(*q.not_yet.begin()));
        continue;
      }
      // The first eligible request in offset order (from the cursor, wrapping, if elevator).
      StreamState& state = *q.state;
      QueueKey cursor = it->first;
      cursor.offset = state.cursor;
      RunQueue::Iter start = c_.elevator() ? q.rq.AtOrAfter(cursor) : q.rq.begin();
      while (EligiblePass(q.rq.at(start)) > pass_) start = q.rq.NextWrapping(start);
      uint64_t& quantum = state.quantum;
      // The run may take requests not yet covered (contiguous ones): drop them from not_yet.
      taken_.clear();
      const uint64_t run =
          q.rq.TakeRun(start, quantum, c_.limits, out, q.not_yet.empty() ? nullptr : &taken_);
      for (const Queued& t : taken_) {
        const uint64_t p = EligiblePass(t);
        if (p > pass_) q.not_yet.erase({p, t.req.offset, t.seq});
      }
      const uint64_t more = q.rq.ContiguousBytesAt(it->first, out->offset + run, 2 * quantum);
      quantum = AdaptQuantum(quantum, run + more, c_.min_quantum, c_.max_quantum);
      state.cursor = out->offset + run;
      ring_cursor_ = it->first;
      if (q.rq.empty()) {
        queues_.erase(it);
        state.idle = true;
        state.lru = idle_.insert(idle_.begin(), ring_cursor_);
        while (idle_.size() > c_.idle_streams) {
          quanta_.erase(idle_.back());
          idle_.pop_back();
        }
      }
      ++pass_;
      queued_ -= out->request_ids.size();
      return Decision{Decision::Kind::kDispatch, 0};
    }
    pass_ = first_pass;  // no request covered yet: skip the empty passes
  }
}

}  // namespace

SchedulerResult MakeMlf(const SchedulerParams& params) {
  ParamReader reader("mlf", params);
  MlfConfig c;
  c.limits = ReadLimits(&reader);
  ReadQuantumParams(&reader, &c);
  IORELAY_RETURN_IF_ERROR(reader.Finish());
  IORELAY_RETURN_IF_ERROR(CheckQuantumParams("mlf", c));
  return std::unique_ptr<Scheduler>(std::make_unique<MlfScheduler>(c, reader.effective()));
}

}  // namespace iorelay::sched
