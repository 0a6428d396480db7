// The daemon's record-lock table under many held ranges: one owner holds N ranges on a file
// (every other byte), another owner takes and releases a write lock in a gap (F_SETLK, then
// F_UNLCK), and an F_GETLK that finds a conflict. docs/daemon.md records the figures.
#include <benchmark/benchmark.h>
#include <fcntl.h>

#include "daemon/lock_manager.h"

namespace {

using iorelay::daemon::LockManager;
using iorelay::daemon::LockSpan;

const iorelay::sched::FileKey kFile{1, 2};

LockSpan Span(uint64_t owner, int64_t start, int64_t length) {
  LockSpan s = *iorelay::daemon::MakeSpan(start, length);
  s.owner = owner;
  return s;
}

LockManager Held(int64_t ranges, int16_t type = F_WRLCK) {
  LockManager m;
  for (int64_t i = 0; i < ranges; ++i) m.Apply(kFile, Span(1, 2 * i, 1), type);
  return m;
}

void BM_LockAndUnlockInAGap(benchmark::State& state) {
  LockManager m = Held(state.range(0));
  const LockSpan gap = Span(2, state.range(0) + 1, 1);  // between two held ranges
  for (auto _ : state) {
    benchmark::DoNotOptimize(m.Apply(kFile, gap, F_WRLCK));
    benchmark::DoNotOptimize(m.Apply(kFile, gap, F_UNLCK));
  }
}
BENCHMARK(BM_LockAndUnlockInAGap)->Arg(1000)->Arg(60000);

void BM_GetLkFindsAConflict(benchmark::State& state) {
  LockManager m = Held(state.range(0));
  LockSpan want = Span(2, state.range(0), 1);
  want.type = F_WRLCK;
  for (auto _ : state) benchmark::DoNotOptimize(m.FindConflict(kFile, want));
}
BENCHMARK(BM_GetLkFindsAConflict)->Arg(1000)->Arg(60000);

void BM_ReadLockOverReadLockedRanges(benchmark::State& state) {
  LockManager m = Held(state.range(0), F_RDLCK);
  const LockSpan whole = Span(2, 0, 0);
  for (auto _ : state) {
    benchmark::DoNotOptimize(m.Apply(kFile, whole, F_RDLCK));
    benchmark::DoNotOptimize(m.Apply(kFile, whole, F_UNLCK));
  }
}
BENCHMARK(BM_ReadLockOverReadLockedRanges)->Arg(1000)->Arg(60000);

}  // namespace

BENCHMARK_MAIN();
