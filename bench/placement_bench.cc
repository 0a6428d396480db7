// Times the route-aware assignment and the metrics at Mira scale (49,152 nodes, 768 bridge
// nodes); the budget is 2 s for both on one core.
#include <benchmark/benchmark.h>

#include "placement/bgq_layout.h"
#include "placement/metrics.h"
#include "placement/policy.h"

namespace iorelay::placement {
namespace {

struct Machine {
  Torus torus;
  IoLayout layout;
};

Machine MakeMachine(int nodes) {
  Torus t = *Torus::Make(*MiraPartitionShape(nodes));
  IoLayout l = *MakeBgqLayout(t);
  return {std::move(t), std::move(l)};
}

void BM_RouteAwareAssignment(benchmark::State& state) {
  const Machine m = MakeMachine(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(RouteAwareAssignment(m.torus, m.layout, PolicyOptions{}));
  }
}

// The same with unreached nodes sent to the nearest bridge under its share (strict balance).
void BM_RouteAwareStrictBalance(benchmark::State& state) {
  const Machine m = MakeMachine(static_cast<int>(state.range(0)));
  const PolicyOptions options{256, Unreached::kNearestUnderShare};
  for (auto _ : state) {
    benchmark::DoNotOptimize(RouteAwareAssignment(m.torus, m.layout, options));
  }
}

void BM_Metrics(benchmark::State& state) {
  const Machine m = MakeMachine(static_cast<int>(state.range(0)));
  const Assignment a = RouteAwareAssignment(m.torus, m.layout, PolicyOptions{});
  for (auto _ : state) {
    benchmark::DoNotOptimize(ComputeMetrics(m.torus, m.layout, a, MessageModel{16, false}));
  }
}

// What the issue budgets: topology and layout, route-aware assignment, all metrics for the
// route-aware mapping and the default model, per-rank and aggregated.
void BM_RouteAwareAndAllMetrics(benchmark::State& state) {
  for (auto _ : state) {
    const Machine m = MakeMachine(static_cast<int>(state.range(0)));
    const Assignment a = RouteAwareAssignment(m.torus, m.layout, PolicyOptions{});
    for (const Assignment* x : {&a, &m.layout.default_bridge}) {
      for (bool aggregate : {false, true}) {
        benchmark::DoNotOptimize(ComputeMetrics(m.torus, m.layout, *x, {16, aggregate}));
      }
    }
  }
}

BENCHMARK(BM_RouteAwareAssignment)->Arg(8192)->Arg(49152)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RouteAwareStrictBalance)->Arg(49152)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Metrics)->Arg(8192)->Arg(49152)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RouteAwareAndAllMetrics)->Arg(49152)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace iorelay::placement

BENCHMARK_MAIN();
