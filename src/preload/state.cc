// Start-up of the interposer: resolve libc, create the client from the environment
// (or stay inert), size the descriptor table, and register the fork handlers.
#include "preload/state.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "client/env_table.h"
#include "preload/cwd.h"
#include "preload/libc_next.h"
#include "preload/ptr_registry.h"

namespace iorelay::preload {

iorelay_client* g_client = nullptr;
constinit FdTable g_table;
constinit PtrRegistry g_dirs;
constinit PtrRegistry g_files;
constinit PtrRegistry g_aiocbs;

namespace {
std::atomic<unsigned> g_umask{022};
}  // namespace

mode_t CreationMode(mode_t mode) {
  return mode & ~static_cast<mode_t>(g_umask.load(std::memory_order_relaxed));
}

void RecordUmask(mode_t mask) { g_umask.store(mask & 0777, std::memory_order_relaxed); }

namespace {

// 2^20 slots (8 MiB of address space, touched only where used) cover any sane limit.
constexpr size_t kMaxTableSlots = size_t{1} << 20;

void Warn(const char* what, int err) {
  char msg[512];
  int n =
      snprintf(msg, sizeof msg, "iorelay_preload: %s: %s; interposer inert\n", what, strerror(err));
  if (n > 0) syscall(SYS_write, 2, msg, static_cast<size_t>(n));
}

int CloseEntry(FdEntry* e) {
  int rc = e->file != nullptr ? iorelay_close(e->file) : 0;
  delete e;
  return rc;
}

// pthread_atfork's handlers: the locks ForkPrepare takes, the others give back (unchecked: no
// annotation names the private mutexes of the tables).
void ForkPrepare() NO_THREAD_SAFETY_ANALYSIS {
  // First, while every lock is free: held offsets move to the daemons (parent and child will
  // share the descriptions).
  if (g_client != nullptr) iorelay_before_fork(g_client);
  g_table.LockForFork();
  g_dirs.LockForFork();
  g_files.LockForFork();
  g_aiocbs.LockForFork();
  LockCwdForFork();
}
void UnlockAfterFork() NO_THREAD_SAFETY_ANALYSIS {
  UnlockCwdAfterFork();
  g_aiocbs.UnlockAfterFork();
  g_files.UnlockAfterFork();
  g_dirs.UnlockAfterFork();
  g_table.UnlockAfterFork();
}
void ForkParent() {
  UnlockAfterFork();
  if (g_client != nullptr) iorelay_after_fork_parent(g_client);
}
void ForkChild() {
  UnlockAfterFork();
  if (g_client != nullptr) iorelay_after_fork_child(g_client);
}

size_t TableSlots() {
  struct rlimit rl;
  if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, nullptr, &rl) != 0) return 65536;
  // The hard limit: the application may raise its soft limit later.
  rlim_t n = rl.rlim_max;
  if (n == RLIM_INFINITY || n > kMaxTableSlots) n = kMaxTableSlots;
  if (n < rl.rlim_cur && rl.rlim_cur <= kMaxTableSlots) n = rl.rlim_cur;
  return n < 1024 ? 1024 : static_cast<size_t>(n);
}

__attribute__((constructor)) void InitInterposer() {
  ResolveLibcNext();
  if (client::ReadEnv(client::EnvVarId::kServers) == nullptr) return;  // inert
  // Read without changing it for longer than these two calls (no other thread runs yet).
  const auto mask = static_cast<mode_t>(syscall(SYS_umask, 0));
  syscall(SYS_umask, mask);
  RecordUmask(mask);
  int err = 0;
  char why[256] = "";
  iorelay_client* c = iorelay_client_from_env_why(&err, why, sizeof why);
  if (c == nullptr) {
    char what[300];
    snprintf(what, sizeof what, "client configuration (%s)", why[0] ? why : "invalid");
    Warn(what, err < 0 ? -err : EINVAL);
    return;
  }
  if (!g_table.Init(TableSlots())) {
    Warn("descriptor table", ENOMEM);
    iorelay_client_destroy(c);
    return;
  }
  g_table.SetReleaser(&CloseEntry);
  pthread_atfork(&ForkPrepare, &ForkParent, &ForkChild);
  g_client = c;
  RestoreInheritedFds();
  RestoreForwardedCwd();
}

// exit() (and a return from main): write-behind's unsent writes go out before the process
// ends, and a failure is written to stderr. Shared objects' destructors run in the reverse of
// their load order, and the interposer loads first: the application's destructors, which may
// still write, have run. _exit, a signal's default action and a crash skip this (see
// docs/interposer.md, Write-behind).
__attribute__((destructor)) void FlushAtExit() {
  if (g_client != nullptr) (void)iorelay_flush(g_client);
}

}  // namespace
}  // namespace iorelay::preload
