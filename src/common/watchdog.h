// A deadline for a stretch of code that may hang: unless the Watchdog is destroyed within
// `limit`, `on_expiry` runs on the watchdog's own thread (it usually ends the process).
#pragma once

#include <chrono>
#include <functional>
#include <thread>
#include <utility>

#include "common/mutex.h"

namespace iorelay {

class Watchdog {
 public:
  Watchdog(std::chrono::milliseconds limit, std::function<void()> on_expiry)
      : thread_([this, limit, fire = std::move(on_expiry)] {
          MutexLock lock(mu_);
          if (!cv_.WaitFor(mu_, limit, [this]() REQUIRES(mu_) { return done_; })) fire();
        }) {}
  ~Watchdog() {
    {
      MutexLock lock(mu_);
      done_ = true;
    }
    cv_.NotifyAll();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  Mutex mu_;
  CondVar cv_;
  bool done_ GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace iorelay
