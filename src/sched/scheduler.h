// The Scheduler interface: the policy that orders (and may merge) data requests at an I/O
// node. Every algorithm of docs/schedulers.md implements it; the daemon and the
// simulator drive it the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "sched/clock.h"

namespace iorelay::sched {

// A file's identity on the I/O node.
struct FileKey {
  uint64_t dev = 0;
  uint64_t ino = 0;
  friend bool operator==(const FileKey&, const FileKey&) = default;
};

enum class IoOp : uint8_t { kRead, kWrite };

struct Request {
  uint64_t id = 0;   // unique among requests not yet released
  uint32_t app = 0;  // application (credential) index, for fairness
  FileKey file;
  IoOp op = IoOp::kRead;
  uint64_t offset = 0;  // bytes
  uint64_t length = 0;  // bytes
  int64_t arrival_ns = 0;
  // Only requests of the same file, op and merge_class are merged into one dispatch. The
  // daemon puts the open mode here (O_DIRECT, O_SYNC/O_DSYNC bits); 0 for plain opens.
  uint32_t merge_class = 0;
  // false: always dispatched alone (O_APPEND writes, whose offset is decided at the call).
  bool mergeable = true;
  // The issuing client (the daemon's session, the simulator's rank), 0 if unknown: what the
  // gather parameter waits for (gather.h).
  uint64_t client = 0;
};

// Defaults of the per-scheduler caps on one dispatch (parameters max_dispatch_bytes and
// max_dispatch_requests). A single request larger than the byte cap is dispatched alone,
// never split. 1024 is IOV_MAX on Linux: one iovec per request in a preadv/pwritev.
inline constexpr uint64_t kDefaultMaxDispatchBytes = 4ull << 20;
inline constexpr uint32_t kDefaultMaxDispatchRequests = 1024;

// One backend I/O: one or more requests of one file and one op whose ranges are
// contiguous in the order given, issued as ONE call over [offset, offset + length).
struct Dispatch {
  FileKey file;
  IoOp op = IoOp::kRead;
  uint64_t offset = 0;
  uint64_t length = 0;
  std::vector<uint64_t> request_ids;  // in offset order (arrival order when overlapping)
  // false: the requests tile [offset, offset + length) exactly, in the order given.
  // true (only to-agg with merge_overlap=true, only reads): the requests' ranges may
  // overlap; [offset, offset + length) is their gap-free union, read once, and each
  // request is served its own sub-range.
  bool overlapping = false;
};

struct Decision {
  enum class Kind { kDispatch, kSleepUntil, kIdle };
  Kind kind = Kind::kIdle;
  int64_t wake_ns = 0;  // kSleepUntil: ask again at (or before, on a new Add) this time
};

// Pure code: no OS calls, no threads, no sleeping; time comes from the arguments. Not
// thread-safe: the driver serialises calls. A request handed out in a Dispatch stays
// the scheduler's business until Release(id) (algorithms that wait for completion, or
// measure service times, rely on it).
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual const char* name() const = 0;
  virtual void Add(const Request& request) = 0;
  // What to do now. On kDispatch, `*out` is overwritten (its vector's capacity is reused).
  virtual Decision Next(int64_t now_ns, Dispatch* out) = 0;
  // The request's I/O finished: `result` is 0 or an errno, `duration_ns` the service time.
  virtual void Release(uint64_t request_id, int result, int64_t duration_ns) = 0;
  // Requests added and not yet dispatched.
  virtual size_t queued() const = 0;
  // The effective configuration, defaults filled in: {"name": ..., parameters...}.
  virtual nlohmann::json EffectiveConfig() const;
  // QoS: the relative share of application `app` (integer >= 1, default 1). Algorithms
  // without a notion of weight ignore it (wfq: bytes per round; aioli: quantum factor).
  virtual void SetAppWeight(uint32_t app, uint32_t weight) {
    (void)app;
    (void)weight;
  }
  // Application `app` is gone for good (a daemon's job released or revoked; ids are never
  // reused): what is kept for it goes, its weight included, at once or, for an algorithm that
  // queues per application, once its queue has emptied (its requests still queued are served).
  virtual void RemoveApp(uint32_t app) { (void)app; }
  // The applications the scheduler holds something for now (a weight, a queue of its own),
  // ascending: what a departed application must leave (counters and tests).
  virtual std::vector<uint32_t> AppsHeld() const { return {}; }
};

}  // namespace iorelay::sched
