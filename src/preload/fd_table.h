// Which application descriptors are forwarded: a fixed array of atomic pointers
// indexed by fd, so that the check on every non-forwarded call is one acquire load.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "iorelay/iorelay.h"

namespace iorelay::preload {

// One forwarded descriptor: its own reference to the remote open file description
// (dup'ed descriptors hold separate references from iorelay_file_ref) and what the
// descriptor itself owns (FD_CLOEXEC). Reference-counted so that a close() racing
// with a read() on another thread frees it only when the read has finished.
struct FdEntry {
  std::atomic<int> refs{1};
  iorelay_file* file = nullptr;  // null: a directory or O_PATH descriptor
  std::string path;              // absolute, normalised: *at() bases, exec re-open
  int open_flags = 0;            // flags given at open (access mode, O_APPEND...)
  std::atomic<bool> cloexec{false};
  // A directory's descriptor: its position as lseek sets it (nothing reads the directory
  // through the descriptor itself; opendir and fdopendir list it afresh).
  std::atomic<int64_t> dir_offset{0};
};

// Called when the last reference to an entry goes; returns 0 or -errno (what close()
// reports). Set once at start-up; the default deletes the entry and returns 0.
using FdEntryReleaser = int (*)(FdEntry*);

class FdTable {
 public:
  // Reserves room for descriptors [0, capacity) with mmap (no malloc). Not
  // thread-safe: call once, before other threads use the table.
  bool Init(size_t capacity);
  void SetReleaser(FdEntryReleaser r) { releaser_ = r; }

  size_t capacity() const { return capacity_; }

  // Lock-free and async-signal-safe.
  bool Contains(int fd) const {
    return fd >= 0 && static_cast<size_t>(fd) < capacity_ &&
           slots_[fd].load(std::memory_order_acquire) != nullptr;
  }

  // A counted reference to the entry at fd (null if none). Thread-safe.
  class Ref {
   public:
    Ref() = default;
    Ref(FdTable* t, FdEntry* e) : table_(t), entry_(e) {}
    Ref(Ref&& o) noexcept : table_(o.table_), entry_(o.entry_) { o.entry_ = nullptr; }
    Ref& operator=(Ref&&) = delete;
    ~Ref() {
      if (entry_ != nullptr) table_->Release(entry_);
    }
    FdEntry* operator->() const { return entry_; }
    FdEntry& operator*() const { return *entry_; }
    FdEntry* get() const { return entry_; }
    explicit operator bool() const { return entry_ != nullptr; }

   private:
    FdTable* table_ = nullptr;
    FdEntry* entry_ = nullptr;
  };
  Ref Acquire(int fd);

  // Puts `e` (whose reference the table takes over) at fd and returns what was there
  // (the caller releases it), or null. fd must be < capacity().
  FdEntry* Install(int fd, FdEntry* e);
  // Empties slot fd and returns what was there (the caller releases it), or null.
  FdEntry* Remove(int fd);
  // Drops one reference; on the last, runs the releaser and returns its result.
  int Release(FdEntry* e);

  // The forwarded descriptors in [first, last], ascending.
  std::vector<int> ListInRange(unsigned first, unsigned last);

  // fork(): held across fork so the child never inherits a locked mutex.
  void LockForFork() ACQUIRE(mu_) { mu_.Lock(); }
  void UnlockAfterFork() RELEASE(mu_) { mu_.Unlock(); }

 private:
  std::atomic<FdEntry*>* slots_ = nullptr;
  size_t capacity_ = 0;
  // Guards writes to slots_ (atomics, read without it: not GUARDED_BY), Acquire's increment,
  // high_water_.
  Mutex mu_;
  size_t high_water_ GUARDED_BY(mu_) = 0;  // 1 + the highest fd ever installed
  FdEntryReleaser releaser_ = nullptr;
};

}  // namespace iorelay::preload
