// The thread that takes iorelayd's stop signals (stop_signals.h).
#include "daemon/stop_signals.h"

#include <pthread.h>
#include <signal.h>

namespace iorelay::daemon {
namespace {

sigset_t StopSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

StopSignals::StopSignals(std::chrono::milliseconds startup_grace,
                         std::function<void(int)> on_stuck_startup)
    : startup_grace_(startup_grace), on_stuck_startup_(std::move(on_stuck_startup)) {
  const sigset_t set = StopSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this] { Take(); });
}

StopSignals::~StopSignals() {
  {
    MutexLock lock(mu_);
    quitting_ = true;
    // sigwait returns only for a signal: this one, sent to that thread alone, is seen as
    // quitting (a real one that raced with it stays pending, blocked, until the process ends).
    if (in_sigwait_) pthread_kill(thread_.native_handle(), SIGTERM);
  }
  cv_.NotifyAll();
  thread_.join();
}

void StopSignals::Take() {
  const sigset_t set = StopSet();
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  MutexLock lock(mu_);
  in_sigwait_ = false;
  if (quitting_) return;
  received_ = sig;
  cv_.NotifyAll();
  if (!cv_.WaitFor(mu_, startup_grace_,
                   [this]() REQUIRES(mu_) { return !starting_ || quitting_; })) {
    on_stuck_startup_(sig);
  }
}

int StopSignals::received() const {
  MutexLock lock(mu_);
  return received_;
}

void StopSignals::StartupDone() {
  {
    MutexLock lock(mu_);
    starting_ = false;
  }
  cv_.NotifyAll();
}

int StopSignals::Wait() {
  MutexLock lock(mu_);
  cv_.Wait(mu_, [this]() REQUIRES(mu_) { return received_ != 0; });
  return received_;
}

}  // namespace iorelay::daemon
