// Waiting by looking again, for the AIO wrappers' waits on requests in flight at the daemon
// beside others (the kernel's, libc's) or with a timeout: a deadline from an optional
// timespec, and sleeps from 10 us doubling to 1 ms, never past the deadline.
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace iorelay::preload {

class PollWait {
 public:
  using Clock = std::chrono::steady_clock;

  // `timeout` null: no deadline.
  explicit PollWait(const struct timespec* timeout)
      : deadline_(timeout == nullptr ? Clock::time_point::max()
                                     : Clock::now() + std::chrono::seconds(timeout->tv_sec) +
                                           std::chrono::nanoseconds(timeout->tv_nsec)) {}

  bool Expired() const { return Clock::now() >= deadline_; }

  // The time left until `limit` or the deadline, whichever comes first, as a timespec.
  struct timespec Left(Clock::duration limit = Clock::duration::max()) const {
    const auto now = Clock::now();
    const auto end = deadline_ - now < limit ? deadline_ : now + limit;
    const auto left = std::max(end - now, Clock::duration::zero());
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(left);
    return {
        static_cast<time_t>(s.count()),
        static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(left - s).count())};
  }

  void Sleep() {
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff_, deadline_ - Clock::now()));
    backoff_ = std::min(backoff_ * 2, std::chrono::microseconds(1000));
  }

 private:
  Clock::time_point deadline_;
  std::chrono::microseconds backoff_{10};
};

}  // namespace iorelay::preload
