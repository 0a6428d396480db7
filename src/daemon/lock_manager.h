// POSIX record locks of the files a daemon owns, keyed by file identity, owned by sessions
// (a session is a process). Pure bookkeeping: no threads, no waiting; LockService parks
// F_SETLKW requests on top of it.
#pragma once

#include <fcntl.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "sched/scheduler.h"

namespace iorelay::daemon {

inline constexpr int64_t kLockEof = std::numeric_limits<int64_t>::max();

struct FileKeyHash {
  size_t operator()(const sched::FileKey& k) const {
    return std::hash<uint64_t>()(k.ino * 0x9E3779B97F4A7C15ull ^ k.dev);
  }
};

// A locked range [start, end); end == kLockEof: to the end of file, however it grows.
struct LockSpan {
  int16_t type = F_RDLCK;  // F_RDLCK or F_WRLCK
  uint64_t owner = 0;
  int32_t pid = 0;
  int64_t start = 0;
  int64_t end = kLockEof;
};

// Turns fcntl's (start, length) into [start, end): length 0 is "to EOF", a negative
// length covers [start + length, start). EINVAL for a range before 0 or overflowing.
Result<LockSpan> MakeSpan(int64_t start, int64_t length);

class LockManager {
 public:
  // F_GETLK: the first lock of another owner that conflicts with `want`, if any.
  std::optional<LockSpan> FindConflict(const sched::FileKey& key, const LockSpan& want) const;
  // Every owner holding a lock that conflicts with `want` (deadlock detection).
  std::vector<uint64_t> ConflictingOwners(const sched::FileKey& key, const LockSpan& want) const;
  // F_SETLK with type F_RDLCK/F_WRLCK: false (nothing changed) on a conflict. The owner's
  // own locks in the range are replaced (upgrade, downgrade), and adjacent or overlapping
  // ranges of the same type merge. With type F_UNLCK: removes the owner's locks in the
  // range, splitting partly covered ones; always succeeds.
  bool Apply(const sched::FileKey& key, const LockSpan& span, int16_t type);
  // The owner's locks on one file (close of any descriptor of it).
  void ReleaseFile(const sched::FileKey& key, uint64_t owner);
  // The owner's locks on every file; returns the files that had some.
  std::vector<sched::FileKey> ReleaseOwner(uint64_t owner);
  // All locks on a file, sorted by start (tests and diagnostics).
  std::vector<LockSpan> Locks(const sched::FileKey& key) const;
  // Locked ranges held on all files (what the lock table's bound counts).
  size_t spans() const { return spans_; }

 private:
  std::unordered_map<sched::FileKey, std::vector<LockSpan>, FileKeyHash> files_;
  size_t spans_ = 0;
};

}  // namespace iorelay::daemon
