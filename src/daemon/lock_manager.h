// POSIX record locks of the files a daemon owns, keyed by file identity, owned by sessions
// (a session is a process). Pure bookkeeping: no threads, no waiting; LockService parks
// F_SETLKW requests on top of it.
#pragma once

#include <fcntl.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
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
  // The owner's group (a daemon's: the owner's job), whose ranges are counted together for its
  // share of the table. Every span of one owner has the same group.
  uint32_t group = 0;
  int32_t pid = 0;
  int64_t start = 0;
  int64_t end = kLockEof;
};

// Turns fcntl's (start, length) into [start, end): length 0 is "to EOF", a negative
// length covers [start + length, start). EINVAL for a range before 0 or overflowing.
Result<LockSpan> MakeSpan(int64_t start, int64_t length);

// Each owner's locks on a file are disjoint ranges kept ordered by start, its read and its
// write locks apart, so a request looks only at the first range it overlaps of each kind (a
// binary search per owner holding locks on the file) instead of copying and sorting the
// file's whole list: an F_SETLK against 60,000 held ranges costs microseconds, and a read
// lock over 500,000 read-locked ranges of another owner does not walk them.
class LockManager {
 public:
  // F_GETLK: the conflicting lock of another owner with the lowest start (then owner), if any.
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
  // All locks on a file, sorted by start, then owner (tests and diagnostics).
  std::vector<LockSpan> Locks(const sched::FileKey& key) const;
  // Locked ranges held on all files (what the lock table's bound counts).
  size_t spans() const { return spans_; }
  // Locked ranges held by the owners of `group` on all files (what a job's share counts).
  size_t spans(uint32_t group) const {
    auto it = group_spans_.find(group);
    return it == group_spans_.end() ? 0 : it->second;
  }

 private:
  using OwnerSpans = std::map<int64_t, LockSpan>;  // by start; disjoint
  struct OwnerLocks {
    OwnerSpans read, write;  // disjoint from each other too
    OwnerSpans& of(int16_t type) { return type == F_WRLCK ? write : read; }
    bool empty() const { return read.empty() && write.empty(); }
  };
  using FileLocks = std::unordered_map<uint64_t, OwnerLocks>;  // by owner
  // The first (lowest start) of `spans` (ordered, disjoint) overlapping `want`.
  static const LockSpan* FirstOverlap(const OwnerSpans& spans, const LockSpan& want);
  // The first of another owner's locks that conflicts with `want`.
  static const LockSpan* FirstConflict(const OwnerLocks& locks, const LockSpan& want);
  // Removes the owner's coverage of [want.start, want.end), keeping the parts outside it.
  void Cut(OwnerSpans& spans, const LockSpan& want);
  void Insert(OwnerSpans& spans, const LockSpan& span);
  void Erase(OwnerSpans& spans, OwnerSpans::iterator it);
  // Drops the owner's entry (and the file's) once it holds nothing there.
  void Forget(const sched::FileKey& key, uint64_t owner);

  std::unordered_map<sched::FileKey, FileLocks, FileKeyHash> files_;
  std::unordered_map<uint64_t, std::unordered_set<sched::FileKey, FileKeyHash>> owner_files_;
  size_t spans_ = 0;
  std::unordered_map<uint32_t, size_t> group_spans_;  // groups holding >= 1 range only
};

}  // namespace iorelay::daemon
