// Record-lock requests on top of LockManager: F_GETLK, F_SETLK, and F_SETLKW parked without
// blocking a thread, retried whenever locks of the file are released. A wait that would
// close a cycle of owners waiting on each other fails with EDEADLK, as on Linux.
#pragma once

#include <functional>
#include <list>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "daemon/lock_manager.h"
#include "proto/messages.h"

namespace iorelay::daemon {

// The lock table holds at most this many ranges over all files; a lock that would need
// more fails with ENOLCK, as the kernel's does when its lock table is full.
inline constexpr size_t kMaxLockSpans = 1 << 20;

class LockService {
 public:
  explicit LockService(size_t max_spans = kMaxLockSpans) : max_spans_(max_spans) {}

  // Called exactly once per request, maybe later (a parked F_SETLKW), never under mu_.
  using Done = std::function<void(int err, const proto::LockReply& reply)>;

  void Lock(const proto::LockRequest& req, uint64_t owner, Done done);
  // POSIX release-on-close for one file.
  void UnlockAll(const sched::FileKey& key, uint64_t owner);
  // The owner (session) is gone: its locks go, its parked waits end with EINTR.
  void ReleaseOwner(uint64_t owner);
  // Shutdown: every parked wait ends with `err`.
  void CancelAll(int err);
  size_t parked() const;
  // Ranges held over all files.
  size_t spans() const;

 private:
  struct Waiter {
    LockSpan span;
    Done done;
  };
  using Waiters = std::list<Waiter>;  // one file's, in arrival order
  using Ready = std::vector<std::pair<Done, int>>;
  void RetryLocked(const sched::FileKey& key, Ready* ready);
  bool WouldDeadlockLocked(uint64_t owner, const std::vector<uint64_t>& blockers,
                           std::unordered_set<uint64_t>* seen) const;
  static void Complete(Ready* ready);

  const size_t max_spans_;
  mutable std::mutex mu_;
  LockManager manager_;  // guarded by mu_
  // Guarded by mu_: parked waits by file, so a release retries only its own file's.
  std::unordered_map<sched::FileKey, Waiters, FileKeyHash> waiters_;
};

}  // namespace iorelay::daemon
