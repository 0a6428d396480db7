// An application's data bytes in flight across all its connections (--max-app-inflight-bytes),
// and the connections paused because of them. A connection's own bytes falling wakes only that
// connection; this wakes every paused connection of the application as soon as the
// application's bytes fall to the limit, instead of at its event loop's next tick.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <unordered_map>

#include "common/mutex.h"

namespace iorelay::daemon {

class AppInflight {
 public:
  void Add(uint64_t n) { RaisePeak(bytes_.fetch_add(n) + n); }
  // Adds `n` if the bytes are at or below `limit` (not over it: the rule by which a paused
  // connection resumes), at once, so that connections of several event loops reserving together
  // pass the limit by one of them at most. False, and nothing added, otherwise.
  bool AddUnlessOver(uint64_t n, uint64_t limit);
  // Any thread. Wakes (and forgets) every parked connection when the bytes are at or below the
  // limit they were parked with.
  void Sub(uint64_t n);
  uint64_t bytes() const { return bytes_.load(); }
  // The most bytes() has been since the start (a statistic: what the limit let through).
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }

  // Parks connection `key` (paused over `limit`) until the bytes fall to `limit`; `wake` is
  // called once, from the thread whose Sub got there. The caller checks the bytes again after
  // parking: a fall just before it woke nobody.
  void Park(const void* key, uint64_t limit, std::function<void()> wake);
  // Forgets `key` (it resumed or closed); no effect if it is not parked.
  void Unpark(const void* key);
  size_t parked() const;

 private:
  void RaisePeak(uint64_t now) {
    uint64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }

  // Sequentially consistent: Sub's fall then its look at parked_count_, against Park's store
  // then the caller's look at the bytes: at least one of the two sees the other's write.
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> peak_{0};
  std::atomic<size_t> parked_count_{0};  // parked_.size(), read without the lock
  mutable Mutex mu_;
  std::atomic<uint64_t> limit_{0};  // every connection parks with the daemon's one limit
  std::unordered_map<const void*, std::function<void()>> parked_ GUARDED_BY(mu_);
};

}  // namespace iorelay::daemon
