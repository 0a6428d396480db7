// Prints, per scheduler spec, a digest of every decision it makes over a fixed random
// workload driven in virtual time (arrivals, 4 dispatch slots, releases after a service
// time). A change that claims to leave decisions alone (a faster structure, say) must leave
// every line unchanged: run it before and after, and diff.
//
//   sched_digest [requests per spec, default 30000]
#include <cstdio>
#include <cstdlib>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "sched/registry.h"

namespace iorelay::sched {
namespace {

const char* const kSpecs[] = {"fifo",
                              "to-agg",
                              "to-agg:merge_overlap=true",
                              "sjf",
                              "sjf:max_wait=1ms",
                              "aioli",
                              "aioli:order=elevator",
                              "aioli:sync=false",
                              "aioli:wait=0",
                              "aioli:quantum=16KiB",
                              "mlf",
                              "mlf:order=elevator",
                              "mlf:quantum=16KiB",
                              "sw:window=5ms",
                              "twins",
                              "twins:by=app",
                              "wfq",
                              "hbrr",
                              "dynamic:period=20ms"};

class Digest {
 public:
  void Add(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h_ ^= (v >> (8 * i)) & 0xff;
      h_ *= 0x100000001b3ull;  // FNV-1a
    }
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};

// Sequential streams with gaps, random reads, overlapping writes, appends, two merge
// classes, and some requests large enough to need several quantum doublings.
class Workload {
 public:
  explicit Workload(uint64_t seed) : rng_(seed), next_(8 * 4, 0) {}
  Request Make(uint64_t id, int64_t now_ns) {
    Request r;
    r.id = id;
    r.app = static_cast<uint32_t>(rng_() % 4);
    r.file = FileKey{1, rng_() % 8};
    r.arrival_ns = now_ns;
    r.merge_class = rng_() % 8 == 0 ? 1 : 0;
    const uint64_t kind = rng_() % 16;
    r.length = (1 + rng_() % 32) * 4096;
    if (kind == 0) r.length = (1 + rng_() % 4) << 20;  // large
    if (kind < 7) {                                    // a stream, sometimes with a gap
      r.op = kind % 2 ? IoOp::kRead : IoOp::kWrite;
      uint64_t& n = next_[r.file.ino * 4 + r.app];
      r.offset = (uint64_t{r.app} << 32) + n;
      n += r.length + (rng_() % 4 == 0 ? 4096 : 0);
    } else if (kind < 11) {  // random reads
      r.op = IoOp::kRead;
      r.offset = (rng_() % 4096) * 4096;
    } else if (kind < 15) {  // writes that often overlap each other
      r.op = IoOp::kWrite;
      r.offset = (rng_() % 256) * 2048;
    } else {  // append
      r.op = IoOp::kWrite;
      r.mergeable = false;
    }
    return r;
  }
  uint64_t Next() { return rng_(); }

 private:
  std::mt19937_64 rng_;
  std::vector<uint64_t> next_;
};

uint64_t Run(const std::string& spec, uint64_t requests, uint64_t* dispatches) {
  SchedulerRegistry reg;
  RegisterBuiltinSchedulers(&reg);
  auto created = reg.CreateFromSpec(spec);
  if (!created.ok()) {
    std::fprintf(stderr, "%s: %s\n", spec.c_str(), created.status().ToString().c_str());
    std::exit(2);
  }
  Scheduler& s = **created;
  s.SetAppWeight(1, 3);
  Workload w(7);
  Digest digest;
  using Done = std::pair<int64_t, std::vector<uint64_t>>;  // (completion time, ids)
  auto later = [](const Done& a, const Done& b) { return a.first > b.first; };
  std::priority_queue<Done, std::vector<Done>, decltype(later)> running(later);
  int64_t now = 0;
  uint64_t added = 0;
  Dispatch d;
  *dispatches = 0;
  while (added < requests || s.queued() > 0 || !running.empty()) {
    // Mostly a few arrivals, sometimes a burst that builds a deep queue.
    uint64_t n = w.Next() % 64 == 0 ? 400 : w.Next() % 6;
    for (; n > 0 && added < requests; --n) s.Add(w.Make(++added, now));
    int64_t wake = INT64_MAX;
    while (running.size() < 4) {
      const Decision dec = s.Next(now, &d);
      digest.Add(static_cast<uint64_t>(dec.kind));
      if (dec.kind == Decision::Kind::kSleepUntil) {
        digest.Add(static_cast<uint64_t>(dec.wake_ns - now));
        wake = dec.wake_ns;
      }
      if (dec.kind != Decision::Kind::kDispatch) break;
      ++*dispatches;
      digest.Add(d.offset);
      digest.Add(d.length);
      digest.Add(d.overlapping);
      for (uint64_t id : d.request_ids) digest.Add(id);
      running.emplace(now + 20'000 + static_cast<int64_t>(d.length / 1000), d.request_ids);
    }
    // Time moves to the next event: a completion, a wake-up, or the next arrivals.
    int64_t step = added < requests ? now + 1 + static_cast<int64_t>(w.Next() % 30'000) : wake;
    if (!running.empty()) step = std::min(step, running.top().first);
    if (step == INT64_MAX) break;  // nothing will ever happen again
    now = std::max(now, std::min(step, wake));
    while (!running.empty() && running.top().first <= now) {
      for (uint64_t id : running.top().second) s.Release(id, 0, 20'000);
      running.pop();
    }
  }
  if (s.queued() > 0)
    std::fprintf(stderr, "%s: %zu requests never dispatched\n", spec.c_str(), s.queued());
  return digest.value();
}

}  // namespace
}  // namespace iorelay::sched

int main(int argc, char** argv) {
  const uint64_t requests = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 30000;
  for (const char* spec : iorelay::sched::kSpecs) {
    uint64_t dispatches = 0;
    const uint64_t h = iorelay::sched::Run(spec, requests, &dispatches);
    std::printf("%-28s %016llx  %llu dispatches\n", spec, static_cast<unsigned long long>(h),
                static_cast<unsigned long long>(dispatches));
  }
  return 0;
}
