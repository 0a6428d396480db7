// Whether an event loop runs a metadata request itself or hands it to the handler pool. A
// hand-off costs two thread wake-ups (the handler's, then the loop's to read the connection
// again), several times a local open or stat; but a request the file system holds up (a hung
// NFS server, a large fsync) would hold every connection of the loop. So a loop runs a request
// itself only when its op is one that is quick by nature and such requests of late were quick:
// the mean of their durations (each weighing 1/8, pooled ones too) is at most the bound
// (`--inline-max-us`, as for data dispatches). The mean starts above the bound, so the first
// requests go to the pool and measure the file system before any runs on a loop.
#pragma once

#include <atomic>
#include <cstdint>

#include "proto/messages.h"

namespace iorelay::daemon {

class MetadataInline {
 public:
  // A bound of 0 never runs a request on the loop.
  explicit MetadataInline(int64_t max_ns) : max_ns_(max_ns), mean_ns_(max_ns + 1) {}

  bool RunOnLoop(proto::Op op) const {
    return max_ns_ > 0 && QuickByNature(op) && mean_ns_.load(std::memory_order_relaxed) <= max_ns_;
  }
  // A metadata request's duration, wherever it ran. Only ops that may run on a loop count:
  // an fsync or a stats reply says nothing of what an open costs.
  void Record(proto::Op op, int64_t ns) {
    if (!QuickByNature(op)) return;
    // (Updates racing on two threads may lose one sample: a mean, not a count.)
    const int64_t mean = mean_ns_.load(std::memory_order_relaxed);
    mean_ns_.store(mean + (ns - mean) / 8, std::memory_order_relaxed);
  }

  // Ops whose cost does not grow with a file's size or a directory's length: not fsync,
  // ftruncate, truncate, fallocate (work proportional to data) nor readdir (to a directory),
  // nor stats (its reply lists up to 4,096 files); nor lseek, which waits for a shared offset
  // that a worker holds for a whole kRead or kWrite.
  static bool QuickByNature(proto::Op op) {
    switch (op) {
      case proto::Op::kFsync:
      case proto::Op::kFtruncate:
      case proto::Op::kTruncate:
      case proto::Op::kFallocate:
      case proto::Op::kReaddir:
      case proto::Op::kLseek:
      case proto::Op::kStats:
        return false;
      default:
        return true;
    }
  }

 private:
  const int64_t max_ns_;
  std::atomic<int64_t> mean_ns_;
};

}  // namespace iorelay::daemon
