// Counters per application and in total (requests, bytes, errors, queue and service time,
// by op family): what kStats returns and what the daemon prints at exit.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "daemon/app_inflight.h"
#include "daemon/conn_counters.h"
#include "proto/messages.h"

namespace iorelay::daemon {

using Family = proto::Family;  // from the op table (src/proto/ops.h)
inline constexpr int kFamilies = 4;
inline Family FamilyOf(proto::Op op) { return proto::Info(op).family; }

struct FamilyCounters {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> errors{0};
  // ENOENT and EEXIST answers to metadata requests (a stat or unlink of a file that is not
  // there, a mkdir of a directory that is): existence checks answered, not failures, so not
  // counted in `errors` (fio makes 4 per job).
  std::atomic<uint64_t> existence_answers{0};
  std::atomic<uint64_t> queue_ns{0};
  std::atomic<uint64_t> service_ns{0};
};

// Fixed log2 histogram of durations: bucket b counts values in [2^(b-1), 2^b) ns (bucket 0:
// 0 ns). Percentiles are reported as the upper bound of their bucket (within 2x).
struct Log2Histogram {
  static constexpr int kBuckets = 64;
  std::atomic<uint64_t> bucket[kBuckets] = {};
  void Add(int64_t ns);
  // The upper bound (ns) of the bucket holding quantile q of `counts` (0 when empty).
  static uint64_t Quantile(const uint64_t (&counts)[kBuckets], double q);
};

// Lock-free: every field is a relaxed atomic, but `inflight` (its parked connections).
struct AppStats {
  explicit AppStats(std::string n) : name(std::move(n)) {}
  const std::string name;
  FamilyCounters family[kFamilies];
  std::atomic<uint64_t> bytes_read{0};
  std::atomic<uint64_t> bytes_written{0};
  // Data requests only (read and write families).
  std::atomic<uint64_t> dispatches{0};           // dispatches holding >= 1 of its requests
  std::atomic<uint64_t> dispatched_requests{0};  // its requests in those dispatches
  Log2Histogram queue_hist;
  Log2Histogram service_hist;
  // Back-pressure across the application's connections (--max-app-inflight-bytes): bytes of its
  // data requests admitted and not yet answered (read lengths, write data).
  AppInflight inflight;
};

// Files counted one by one; the daemon's later files are counted together ("files_other"), so a
// daemon that serves files for days keeps its memory and its statistics' size bounded.
inline constexpr size_t kMaxFileCounters = 4096;

// Per file (dev, ino): data requests, bytes and dispatches.
struct FileCounters {
  uint64_t requests = 0;
  uint64_t bytes = 0;
  uint64_t dispatches = 0;
};

class Stats {
 public:
  // One AppStats per name, applications 0, 1, ... (tests); a daemon adds its jobs' with AddApp.
  explicit Stats(const std::vector<std::string>& app_names = {});
  AppStats* app(size_t index);
  // Counters for a job admitted as application `app` (shared with the job, which its sessions
  // hold); listed until DepartApp and one more ToJson after it.
  std::shared_ptr<AppStats> AddApp(uint32_t app, const std::string& name);
  // The job left: its final counters are listed once more (with "departed": true), then
  // folded into "departed_apps" of the total.
  void DepartApp(uint32_t app);

  static void Record(AppStats* app, Family family, int error, uint64_t bytes_read,
                     uint64_t bytes_written, int64_t queue_ns, int64_t service_ns);

  // One dispatch of `requests` requests, `bytes` in all, for `app`'s `requests` of them.
  static void RecordAppDispatch(AppStats* app, uint64_t requests);
  void RecordFileDispatch(uint64_t dev, uint64_t ino, uint64_t requests, uint64_t bytes);
  // One authenticated request of `op` received (the "by_op" counts of the total).
  void CountOp(proto::Op op) {
    by_op_[static_cast<uint8_t>(op)].fetch_add(1, std::memory_order_relaxed);
  }

  // {"total": {...}, "apps": {"name": {...}}, "files": {"dev:ino": {...}}}; apps and total
  // with requests, errors, existence_answers (metadata ENOENT/EEXIST, not in errors), bytes_read,
  // bytes_written, queue_time_ns, service_time_ns, "by_family", dispatches,
  // mean_requests_per_dispatch (the application's data requests per dispatch that carried any of
  // them) and data-request queue/service p50/p99 (ns, as log2 bucket upper bounds); files with
  // requests, bytes, dispatches and mean_requests_per_dispatch. Apps also have inflight_bytes
  // (and inflight_bytes_peak, the most since the start) and paused_connections (now: its
  // connections not read for --max-app-inflight-bytes, their bytes waiting in their sockets).
  // The total also has "by_op": requests received per op name. Plus the ConnCounters as
  // top-level scalars under their keys in conn_counters.h (a gauge as KEY, now, and KEY_peak).
  nlohmann::json ToJson() const;
  // What a job admitted at run time sees: its own application's counters only, as "total" and
  // as its one entry of "apps"; no file, op or connection counter of the daemon (other jobs'
  // files and activity would show through them), and no departed application consumed.
  nlohmann::json ToJsonOf(uint32_t app) const;

  ConnCounters conn;

 private:
  struct Entry {
    std::shared_ptr<AppStats> stats;
    bool departed = false;
  };
  mutable Mutex apps_mu_;
  mutable std::map<uint32_t, Entry> apps_ GUARDED_BY(apps_mu_);
  // Departed applications already listed: their requests and bytes stay in the total.
  mutable uint64_t gone_requests_[kFamilies] GUARDED_BY(apps_mu_) = {};
  mutable uint64_t gone_errors_[kFamilies] GUARDED_BY(apps_mu_) = {};
  mutable uint64_t gone_read_ GUARDED_BY(apps_mu_) = 0;
  mutable uint64_t gone_written_ GUARDED_BY(apps_mu_) = 0;
  mutable uint64_t gone_apps_ GUARDED_BY(apps_mu_) = 0;
  std::atomic<uint64_t> by_op_[256] = {};
  mutable Mutex files_mu_;
  std::map<std::pair<uint64_t, uint64_t>, FileCounters> files_ GUARDED_BY(files_mu_);
  FileCounters files_other_ GUARDED_BY(files_mu_);  // files beyond kMaxFileCounters
};

}  // namespace iorelay::daemon
