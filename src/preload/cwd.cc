// The forwarded working directory (cwd.h): one buffer under a mutex, with a flag that keeps the
// common case (the kernel's working directory) to one atomic load per relative path.
#include "preload/cwd.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "preload/state.h"

namespace iorelay::preload {
namespace {

std::atomic<bool> g_set{false};
char g_path[PATH_MAX] GUARDED_BY(g_cwd_mu);

}  // namespace

iorelay::Mutex g_cwd_mu;

bool ForwardedCwd(char* out, size_t size) {
  if (!g_set.load(std::memory_order_acquire)) return false;
  iorelay::MutexLock lock(g_cwd_mu);
  if (!g_set.load(std::memory_order_relaxed)) return false;
  size_t n = strlen(g_path);
  if (n + 1 > size) return false;
  memcpy(out, g_path, n + 1);
  return true;
}

bool RecordForwardedCwd(const char* abs_path) {
  size_t n = strlen(abs_path);
  while (n > 1 && abs_path[n - 1] == '/') --n;
  if (n + 1 > sizeof g_path) return false;
  memcpy(g_path, abs_path, n);
  g_path[n] = '\0';
  g_set.store(true, std::memory_order_release);
  return true;
}

void ClearForwardedCwd() { g_set.store(false, std::memory_order_release); }

void LockCwdForFork() { g_cwd_mu.Lock(); }
void UnlockCwdAfterFork() { g_cwd_mu.Unlock(); }

// Whether the kernel's working directory is a gone one, as the exec'ing image left it: a removed
// directory (getcwd: ENOENT) or the /proc/self/fdinfo stand-in. Otherwise the variable is stale
// (an image between did not keep it) and the kernel's working directory stands.
bool KernelCwdIsGone() {
  char buf[PATH_MAX];
  if (syscall(SYS_getcwd, buf, sizeof buf) < 0) return errno == ENOENT;
  return strncmp(buf, "/proc/", 6) == 0 && strstr(buf, "/fdinfo") != nullptr;
}

void RestoreForwardedCwd() {
  const char* path = getenv(kCwdEnv);
  if (path == nullptr) return;
  if (path[0] == '/' && iorelay_is_forwarded(g_client, path) == 1 && KernelCwdIsGone()) {
    iorelay::MutexLock lock(g_cwd_mu);
    (void)RecordForwardedCwd(path);
  }
  unsetenv(kCwdEnv);
}

}  // namespace iorelay::preload
