// Adaptive spinning (spin_wait.h): whether the machine has more runnable threads than this
// process's CPUs, from /proc/loadavg, read with raw system calls (the interposer's own open
// would be re-entered) at most every 10 ms.
#include "client/spin_wait.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

namespace iorelay::client {
namespace {

constexpr int64_t kLoadSampleNs = 10'000'000;

std::atomic<bool> g_adaptive{false};
std::atomic<int64_t> g_sampled_ns{0};
std::atomic<bool> g_overloaded{false};
std::atomic<int> g_cpus{0};

int AllowedCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

// The running count of /proc/loadavg ("0.50 0.40 0.30 RUNNING/TOTAL LASTPID"); -1 if unread.
int RunningThreads() {
  const int fd =
      static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/proc/loadavg", O_RDONLY | O_CLOEXEC));
  if (fd < 0) return -1;
  char buf[128];
  const long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
  syscall(SYS_close, fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* p = buf;
  for (int field = 0; field < 3 && p != nullptr; ++field) {
    p = std::strchr(p, ' ');
    if (p != nullptr) ++p;
  }
  return p == nullptr ? -1 : std::atoi(p);
}

}  // namespace

void SetSpinAdaptive(bool on) {
  if (on && g_cpus.load() == 0) g_cpus.store(AllowedCpus());
  g_adaptive.store(on, std::memory_order_relaxed);
}

bool SpinPaused() {
  if (!g_adaptive.load(std::memory_order_relaxed)) return false;
  const int64_t now = MonotonicNs();
  int64_t sampled = g_sampled_ns.load(std::memory_order_relaxed);
  // One thread samples per period; the others read its answer.
  if (now - sampled >= kLoadSampleNs &&
      g_sampled_ns.compare_exchange_strong(sampled, now, std::memory_order_relaxed)) {
    const int running = RunningThreads();
    g_overloaded.store(running > g_cpus.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  return g_overloaded.load(std::memory_order_relaxed);
}

}  // namespace iorelay::client
