// A deadline for a stretch of code that may hang: unless the Watchdog is destroyed within
// `limit`, `on_expiry` runs on the watchdog's own thread (it usually ends the process).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace iorelay {

class Watchdog {
 public:
  Watchdog(std::chrono::milliseconds limit, std::function<void()> on_expiry)
      : thread_([this, limit, fire = std::move(on_expiry)] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, limit, [this] { return done_; })) fire();
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;   // guarded by mu_
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace iorelay
