// Record-lock requests on top of LockManager: F_GETLK, F_SETLK, and F_SETLKW parked without
// blocking a thread, retried whenever locks of the file are released. A wait that would
// close a cycle of owners waiting on each other fails with EDEADLK, as on Linux.
#pragma once

#include <functional>
#include <list>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/mutex.h"
#include "daemon/lock_manager.h"
#include "proto/messages.h"

namespace iorelay::daemon {

// The lock table holds at most this many ranges over all files; a lock that would need
// more fails with ENOLCK, as the kernel's does when its lock table is full.
inline constexpr size_t kMaxLockSpans = 1 << 20;
// An owner (a process) has at most this many F_SETLKW waits parked (one per thread blocked in
// fcntl); one more fails with ENOLCK, so no owner makes every release retry without bound.
inline constexpr size_t kMaxParkedPerOwner = 256;

// The share of the table an owner's group may hold (a daemon's: the owner's job, with its
// max_locks share): a lock that would need more ranges than `max_spans` held by the group's
// owners together fails with ENOLCK, whatever other groups hold.
struct LockShare {
  uint32_t group = 0;
  size_t max_spans = 0;  // 0: bounded by the table only
};

class LockService {
 public:
  explicit LockService(size_t max_spans = kMaxLockSpans) : max_spans_(max_spans) {}

  // Called exactly once per request, maybe later (a parked F_SETLKW), never under mu_.
  using Done = std::function<void(int err, const proto::LockReply& reply)>;

  // `share`: the owner's group and its bound; an owner gives the same group every time.
  void Lock(const proto::LockRequest& req, uint64_t owner, Done done, LockShare share = {});
  // POSIX release-on-close for one file.
  void UnlockAll(const sched::FileKey& key, uint64_t owner);
  // The owner (session) is gone: its locks go, its parked waits end with EINTR.
  void ReleaseOwner(uint64_t owner);
  // Shutdown: every parked wait ends with `err`.
  void CancelAll(int err);
  size_t parked() const;
  // Ranges held over all files.
  size_t spans() const;
  // Ranges held by the owners of `group` over all files.
  size_t spans(uint32_t group) const;

 private:
  struct Waiter {
    LockSpan span;
    Done done;
  };
  using Waiters = std::list<Waiter>;  // one file's, in arrival order
  using Ready = std::vector<std::pair<Done, int>>;
  void RetryLocked(const sched::FileKey& key, Ready* ready) REQUIRES(mu_);
  // Removes a parked wait (its owner's index entry too); returns the next of its file's.
  Waiters::iterator Unpark(Waiters& waiters, Waiters::iterator it) REQUIRES(mu_);
  bool WouldDeadlockLocked(uint64_t owner, const std::vector<uint64_t>& blockers,
                           std::unordered_set<uint64_t>* seen) const REQUIRES(mu_);
  static void Complete(Ready* ready);  // never under mu_

  const size_t max_spans_;
  mutable Mutex mu_;
  LockManager manager_ GUARDED_BY(mu_);
  // Parked waits by file, so a release retries only its own file's.
  std::unordered_map<sched::FileKey, Waiters, FileKeyHash> waiters_ GUARDED_BY(mu_);
  // The same waits by owner (the deadlock check follows owners).
  std::unordered_map<uint64_t, std::vector<std::pair<sched::FileKey, Waiters::iterator>>>
      parked_by_owner_ GUARDED_BY(mu_);
};

}  // namespace iorelay::daemon
