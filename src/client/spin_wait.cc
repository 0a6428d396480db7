// Adaptive spinning (spin_wait.h): whether the machine has more runnable threads than this
// process's CPUs (common/runnable_threads.h), read at most every 10 ms.
#include "client/spin_wait.h"

#include <atomic>

#include "common/runnable_threads.h"

namespace iorelay::client {
namespace {

std::atomic<bool> g_adaptive{false};
std::atomic<int> g_cpus{0};
RunnableSample g_runnable;

}  // namespace

void SetSpinAdaptive(bool on) {
  if (on && g_cpus.load() == 0) g_cpus.store(AllowedCpus());
  g_adaptive.store(on, std::memory_order_relaxed);
}

bool SpinPaused() {
  if (!g_adaptive.load(std::memory_order_relaxed)) return false;
  return g_runnable.Get(MonotonicNs()) > g_cpus.load(std::memory_order_relaxed);
}

}  // namespace iorelay::client
