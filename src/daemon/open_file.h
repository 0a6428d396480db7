// An open file description as the daemon keeps it: the backend fd, the status flags and
// the shared offset. Refcounted (shared_ptr) by every session holding its handle and by
// requests in flight; the backend fd is closed when the last reference goes, by whichever
// thread drops it (its drop, an acq_rel decrement, orders every other holder's use of the fd
// before the close).
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "backend/backend.h"
#include "common/mutex.h"
#include "daemon/fd_budget.h"
#include "sched/scheduler.h"

namespace iorelay::daemon {

class OpenFile {
 public:
  OpenFile(backend::Backend* backend, int fd, int flags, sched::FileKey key, uint32_t mode)
      : backend_(backend),
        fd_(fd),
        flags_(flags),
        key_(key),
        mode_(mode),
        direct_align_(backend->DirectIoAlignment(fd)) {}
  ~OpenFile() {
    close_report_->status = backend_->Close(fd_);
    close_report_->done.store(true, std::memory_order_release);
    if (budget_ != nullptr) budget_->Give();
  }
  // The file's descriptor counts in `budget` (FdBudget::Take done) until it is closed.
  void CountIn(FdBudget* budget) { budget_ = budget; }
  // Drops `file`, kClose's reference after the handle left its session. Returns the backend
  // close's status (network file systems report write-back errors there) when the fd is closed
  // by now: this was the last reference, or the last other holder let go meanwhile. Otherwise
  // the last holder closes it later, and this returns Ok.
  static Status Release(std::shared_ptr<OpenFile> file) {
    std::shared_ptr<CloseReport> report = file->close_report_;
    file.reset();
    return report->done.load(std::memory_order_acquire) ? report->status : Status::Ok();
  }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;

  int fd() const { return fd_; }
  int flags() const { return flags_.load(std::memory_order_relaxed); }
  void set_flags(int flags) { flags_.store(flags, std::memory_order_relaxed); }
  int access_mode() const { return flags() & O_ACCMODE; }
  const sched::FileKey& key() const { return key_; }
  uint32_t mode() const { return mode_; }
  // Offset and length alignment of O_DIRECT calls on this file (asked once at open: the
  // flag may be set later with fcntl).
  uint32_t direct_align() const { return direct_align_; }

  // The shared offset. kRead/kWrite hold pos_mu for the whole I/O, as Linux holds
  // f_pos_lock, so concurrent reads and writes on one description never overlap.
  // Writers hold pos_mu; `pos` is atomic so the scheduler may read it as a hint (so it is not
  // GUARDED_BY: the analysis has no annotation for "writes only").
  Mutex pos_mu;
  std::atomic<uint64_t> pos{0};

  // Sessions holding a handle on this description, and adoptions announced (kExpectAdopt) but
  // not yet made: with one holder and none announced, the description is no longer shared and
  // its client may hold the offset again.
  std::atomic<int> holders{0};
  std::atomic<int> expected_adopts{0};
  bool Sole() const { return holders.load() == 1 && expected_adopts.load() == 0; }

 private:
  backend::Backend* backend_;
  int fd_;
  std::atomic<int> flags_;
  sched::FileKey key_;
  uint32_t mode_;
  uint32_t direct_align_;
  FdBudget* budget_ = nullptr;
  // Written once, by the destructor; read by Release, which may run in another thread.
  struct CloseReport {
    std::atomic<bool> done{false};
    Status status = Status::Ok();
  };
  std::shared_ptr<CloseReport> close_report_ = std::make_shared<CloseReport>();
};

}  // namespace iorelay::daemon
