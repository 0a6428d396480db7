// SIGTERM and SIGINT for iorelayd, taken by a thread of their own from before start-up to the
// end: a stop asked for while start-up waits in a call that does not return (a FIFO given as a
// file, a hung file system) still ends the process, instead of waiting for start-up to finish.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "common/mutex.h"

namespace iorelay::daemon {

class StopSignals {
 public:
  // Blocks SIGTERM and SIGINT in the calling thread, so in every thread it creates after, and
  // starts the thread that takes them. A signal that comes before StartupDone() gives start-up
  // `startup_grace` to return; past that, `on_stuck_startup(signal)` runs on that thread (it
  // ends the process).
  StopSignals(std::chrono::milliseconds startup_grace, std::function<void(int)> on_stuck_startup);
  // Stops the thread; the signals stay blocked.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The stop signal received so far, or 0.
  int received() const;
  // Start-up returned (whether it succeeded or not): a stop signal no longer has a deadline.
  void StartupDone();
  // Blocks until a stop signal comes; returns it.
  int Wait();

 private:
  void Take();

  const std::chrono::milliseconds startup_grace_;
  const std::function<void(int)> on_stuck_startup_;
  mutable Mutex mu_;
  CondVar cv_;
  int received_ GUARDED_BY(mu_) = 0;
  bool starting_ GUARDED_BY(mu_) = true;
  bool quitting_ GUARDED_BY(mu_) = false;
  bool in_sigwait_ GUARDED_BY(mu_) = true;  // the destructor must wake it with a signal
  std::thread thread_;                      // last: started once the rest exists
};

}  // namespace iorelay::daemon
