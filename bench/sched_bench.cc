// Decision cost of every algorithm: Add + Next + Release per request with 1k, 10k and 100k
// requests queued (docs/schedulers.md records the numbers and the command).
#include <benchmark/benchmark.h>

#include <random>

#include "sched/algorithms.h"
#include "sched/registry.h"

namespace iorelay::sched {
namespace {

const char* const kAlgorithms[] = {"fifo", "to-agg", "sjf", "aioli", "mlf",
                                   "sw",   "twins",  "wfq", "hbrr",  "dynamic"};

// 64 files x 8 applications; half sequential write streams, half random 4 KiB-aligned reads.
class Source {
 public:
  explicit Source(uint64_t seed) : rng_(seed), next_(64 * 8, 0) {}
  Request Make(int64_t now_ns) {
    Request r;
    r.id = ++id_;
    r.app = static_cast<uint32_t>(rng_() % 8);
    r.file = FileKey{1, rng_() % 64};
    r.length = (1 + rng_() % 16) * 4096;
    r.arrival_ns = now_ns;
    if (rng_() % 2 == 0) {
      r.op = IoOp::kWrite;
      uint64_t& n = next_[r.file.ino * 8 + r.app];
      r.offset = (uint64_t{r.app} << 40) + n;
      n += r.length + (rng_() % 4 == 0 ? 4096 : 0);  // some gaps: not everything merges
    } else {
      r.op = IoOp::kRead;
      r.offset = (rng_() % (1 << 18)) * 4096;
    }
    return r;
  }

 private:
  std::mt19937_64 rng_;
  std::vector<uint64_t> next_;
  uint64_t id_ = 0;
};

// `guarded`: through the registry, so with the WriteOrderGuard (as the daemon runs it);
// otherwise the bare algorithm, to show what the guard costs.
void BM_AddNextRelease(benchmark::State& state, const char* algorithm, bool guarded) {
  SchedulerRegistry reg;
  RegisterBuiltinSchedulers(&reg);
  SchedulerResult created = Status::NotFound("");
  if (guarded) {
    created = reg.Create(algorithm);
  } else {
    const std::string n = algorithm;
    auto make = n == "fifo"     ? MakeFifo
                : n == "to-agg" ? MakeToAgg
                : n == "sjf"    ? MakeSjf
                : n == "aioli"  ? MakeAioli
                : n == "mlf"    ? MakeMlf
                : n == "sw"     ? MakeSw
                : n == "twins"  ? MakeTwins
                : n == "wfq"    ? MakeWfq
                : n == "hbrr"   ? MakeHbrr
                                : MakeDynamic;
    created = make(SchedulerParams{});
  }
  if (!created.ok()) {
    state.SkipWithError(created.status().ToString().c_str());
    return;
  }
  Scheduler& s = **created;
  const size_t depth = static_cast<size_t>(state.range(0));
  Source src(42);
  int64_t now = 0;
  while (s.queued() < depth) s.Add(src.Make(now));
  Dispatch d;
  int64_t requests = 0;
  for (auto _ : state) {
    now += 1000;
    Decision dec = s.Next(now, &d);
    if (dec.kind == Decision::Kind::kSleepUntil) {
      now = dec.wake_ns;
      dec = s.Next(now, &d);
    }
    if (dec.kind == Decision::Kind::kDispatch) {
      for (uint64_t id : d.request_ids) s.Release(id, 0, 20'000 + static_cast<int64_t>(d.length));
      requests += static_cast<int64_t>(d.request_ids.size());
    }
    while (s.queued() < depth) s.Add(src.Make(now));
  }
  state.counters["ns_per_request"] = benchmark::Counter(
      static_cast<double>(requests), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["requests_per_dispatch"] =
      static_cast<double>(requests) / static_cast<double>(state.iterations());
}

int Register() {
  for (const char* a : kAlgorithms) {
    benchmark::RegisterBenchmark((std::string("sched/") + a).c_str(), BM_AddNextRelease, a, true)
        ->Arg(1000)
        ->Arg(10000)
        ->Arg(100000);
    benchmark::RegisterBenchmark((std::string("unguarded/") + a).c_str(), BM_AddNextRelease, a,
                                 false)
        ->Arg(1000)
        ->Arg(100000);
  }
  return 0;
}

}  // namespace
}  // namespace iorelay::sched

int main(int argc, char** argv) {
  iorelay::sched::Register();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
