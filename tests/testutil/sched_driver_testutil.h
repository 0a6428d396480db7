// Test support: drives a Scheduler in virtual time like the daemon would (arrivals, a pool
// of workers, Release with the service time) and records when each request ran.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "sched/registry.h"
#include "sched/scheduler.h"

namespace iorelay::sched::testing {

// A scheduler from the builtin registry (with its WriteOrderGuard), or nullptr after a
// test failure naming the spec.
inline std::unique_ptr<Scheduler> New(const std::string& spec) {
  SchedulerRegistry reg;
  RegisterBuiltinSchedulers(&reg);
  auto s = reg.CreateFromSpec(spec);
  EXPECT_TRUE(s.ok()) << spec << ": " << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

inline Request MakeRequest(uint64_t id, uint64_t ino, uint64_t offset, uint64_t length,
                           IoOp op = IoOp::kWrite, int64_t arrival_ns = 0, uint32_t app = 0) {
  Request r;
  r.id = id;
  r.app = app;
  r.file = FileKey{1, ino};
  r.op = op;
  r.offset = offset;
  r.length = length;
  r.arrival_ns = arrival_ns;
  return r;
}

struct Ran {
  Dispatch d;
  int64_t start_ns = 0;
  int64_t done_ns = 0;
};

struct Trace {
  std::vector<Ran> runs;              // in dispatch order
  std::map<uint64_t, size_t> run_of;  // request id -> index in runs (first dispatch)
  std::map<uint64_t, int> times_dispatched;
  bool stuck = false;  // a kSleepUntil that did not move time forward
  int64_t end_ns = 0;
};

// `arrivals` sorted by arrival_ns. Each dispatch occupies one of `workers` for
// service(d) ns, then each of its requests is released (by id) with that duration.
inline Trace Drive(Scheduler& s, const std::vector<Request>& arrivals, int workers,
                   const std::function<int64_t(const Dispatch&)>& service) {
  Trace t;
  using Busy = std::pair<int64_t, size_t>;  // (done, run index)
  std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
  size_t next = 0;
  int64_t now = 0;
  Dispatch d;
  for (;;) {
    while (!busy.empty() && busy.top().first <= now) {
      const Ran& r = t.runs[busy.top().second];
      for (uint64_t id : r.d.request_ids) s.Release(id, 0, r.done_ns - r.start_ns);
      busy.pop();
    }
    while (next < arrivals.size() && arrivals[next].arrival_ns <= now) s.Add(arrivals[next++]);
    int64_t wake = INT64_MAX;
    while (static_cast<int>(busy.size()) < workers) {
      Decision dec = s.Next(now, &d);
      if (dec.kind == Decision::Kind::kDispatch) {
        const int64_t done = now + service(d);
        t.runs.push_back(Ran{d, now, done});
        for (uint64_t id : d.request_ids) {
          if (t.times_dispatched[id]++ == 0) t.run_of[id] = t.runs.size() - 1;
        }
        busy.emplace(done, t.runs.size() - 1);
        continue;
      }
      if (dec.kind == Decision::Kind::kSleepUntil) {
        if (dec.wake_ns <= now) t.stuck = true;
        wake = dec.wake_ns;
      }
      break;
    }
    if (t.stuck) break;
    int64_t at = wake;
    if (next < arrivals.size()) at = std::min(at, arrivals[next].arrival_ns);
    if (!busy.empty()) at = std::min(at, busy.top().first);
    if (at == INT64_MAX) break;
    now = std::max(now, at);
  }
  t.end_ns = now;
  return t;
}

// Order of dispatches as the ids of their first requests, with no service time in between.
inline std::vector<uint64_t> DrainOrder(Scheduler& s, int64_t now_ns = 0) {
  std::vector<uint64_t> order;
  Dispatch d;
  while (s.Next(now_ns, &d).kind == Decision::Kind::kDispatch) {
    order.push_back(d.request_ids.front());
    for (uint64_t id : d.request_ids) s.Release(id, 0, 1000);
  }
  return order;
}

// Dispatches and releases until nothing is queued; returns the requests released. A decision
// other than a dispatch while requests are queued fails the calling test.
inline size_t DrainAll(Scheduler& s, int64_t now_ns = 0) {
  size_t released = 0;
  while (s.queued() > 0) {
    Dispatch d;
    const Decision::Kind kind = s.Next(now_ns, &d).kind;
    EXPECT_EQ(kind, Decision::Kind::kDispatch);
    if (kind != Decision::Kind::kDispatch) break;
    for (uint64_t id : d.request_ids) s.Release(id, 0, 1000), ++released;
  }
  return released;
}

}  // namespace iorelay::sched::testing
