// Runnable threads from /proc/loadavg (runnable_threads.h), with raw system calls: the
// interposer's own open would be re-entered.
#include "common/runnable_threads.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace iorelay {

int AllowedCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

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

int RunnableSample::Get(int64_t now_ns) {
  int64_t sampled = sampled_ns_.load(std::memory_order_relaxed);
  // One thread reads per period; the others take its answer.
  if (now_ns - sampled >= kPeriodNs &&
      sampled_ns_.compare_exchange_strong(sampled, now_ns, std::memory_order_relaxed)) {
    running_.store(RunningThreads(), std::memory_order_relaxed);
  }
  return Last();
}

}  // namespace iorelay
