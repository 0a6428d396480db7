// The scheduler loop: slots, workers, inline runs and timed holds.
#include "daemon/dispatcher.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

#include "common/monotonic.h"

namespace iorelay::daemon {

Dispatcher::Dispatcher(std::unique_ptr<sched::Scheduler> scheduler, const sched::Clock* clock,
                       int slots, int64_t inline_max_ns, int64_t worker_spin_ns, Executor executor,
                       WorkerSpinRule::Mode spin_mode)
    : clock_(clock),
      executor_(std::move(executor)),
      slots_(slots),
      scheduler_(std::move(scheduler)),
      free_slots_(slots),
      inline_max_ns_(inline_max_ns),
      spin_rule_(worker_spin_ns, spin_mode),
      cores_(AllowedCpus()) {
  for (int i = 0; i < slots; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

Dispatcher::~Dispatcher() { Stop(); }

sched::Decision Dispatcher::TakeLocked(Taken* t, bool inline_run) {
  // Inline runs take a slot too: while every slot is busy, requests wait in the scheduler,
  // which is what lets it order and merge them (with unbounded inline runs each request
  // would be dispatched alone the moment it arrived).
  if (free_slots_ == 0) return sched::Decision{sched::Decision::Kind::kIdle, 0};
  sched::Decision d = scheduler_->Next(clock_->NowNs(), &t->dispatch);
  if (d.kind != sched::Decision::Kind::kDispatch) return d;
  --free_slots_;
  if (inline_run) ++inline_running_;
  t->works.clear();
  for (uint64_t id : t->dispatch.request_ids) {
    auto it = queued_.find(id);
    if (it == queued_.end()) continue;  // a scheduler bug; never run an unknown id
    t->works.push_back(std::move(it->second));
    queued_.erase(it);
  }
  return d;
}

int64_t RunCost(int64_t duration_ns, uint64_t bytes) {
  constexpr uint64_t kUnit = 64 * 1024;
  const int64_t per_unit =
      bytes <= kUnit ? duration_ns
                     : static_cast<int64_t>(static_cast<double>(duration_ns) * kUnit / bytes);
  return std::max(per_unit, duration_ns / 4);
}

void Dispatcher::Run(Taken* t, bool inline_run) {
  const size_t n = t->works.size();
  thread_local std::vector<Work*> ptrs;
  thread_local std::vector<int> results;
  thread_local std::vector<uint64_t> ids;
  ptrs.clear();
  ids.clear();
  results.assign(n, 0);
  uint64_t bytes = 0;
  for (auto& w : t->works) {
    ptrs.push_back(w.get());
    ids.push_back(w->request.id);
    bytes += w->request.length;
  }
  int64_t start = clock_->NowNs();
  executor_(t->dispatch, ptrs.data(), n, results.data());
  int64_t duration = clock_->NowNs() - start;
  t->works.clear();  // drops file references outside the lock
  MutexLock lock(mu_);
  for (size_t i = 0; i < n; ++i) scheduler_->Release(ids[i], results[i], duration);
  mean_run_ns_ += (RunCost(duration, bytes) - mean_run_ns_) / 8;
  if (inline_run) --inline_running_;
  ++free_slots_;
  if (scheduler_->queued() > 0 && free_slots_ > 0) WakeWorkerLocked();
  if (QuietLocked()) drain_cv_.NotifyAll();
}

void Dispatcher::Submit(std::unique_ptr<Work> work, bool may_run_inline) {
  thread_local Taken taken;
  MutexLock lock(mu_);
  uint64_t id = next_id_++;
  work->request.id = id;
  const uint64_t work_length = work->request.length;
  scheduler_->Add(work->request);
  queued_.emplace(id, std::move(work));
  // (The cost is a mean of past dispatches: a request larger than a client's pieces is not
  // bet on it.)
  if (may_run_inline && inline_max_ns_ > 0 && mean_run_ns_ <= inline_max_ns_ &&
      work_length <= kInlineMaxBytes &&
      TakeLocked(&taken, true).kind == sched::Decision::Kind::kDispatch) {
    if (!RunsOnLoop(taken)) {  // a worker runs it, in the slot it holds
      --inline_running_;
      handoff_.push_back(std::move(taken));
      WakeWorkerLocked();
      return;
    }
    lock.Unlock();
    Run(&taken, true);
    return;
  }
  if (free_slots_ > 0) WakeWorkerLocked();
}

bool Dispatcher::RunsOnLoop(const Taken& t) {
  uint64_t bytes = 0;
  for (const auto& w : t.works) {
    if (w->op == proto::Op::kRead || w->op == proto::Op::kWrite) return false;
    if (w->reply_op == proto::Op::kPreadPiped) return false;  // may wait for its pipe's lock
    bytes += w->request.length;
  }
  return bytes <= kInlineMaxBytes;
}

void Dispatcher::WakeWorkerLocked() {
  if (spin_rule_.gap_open()) spin_rule_.Work(MonotonicNs());
  if (spinning_ && !spinner_signalled_) {
    spinner_signalled_ = true;
    work_signals_.fetch_add(1, std::memory_order_release);
    return;
  }
  work_cv_.NotifyOne();
}

bool Dispatcher::SpinNowLocked() const { return spin_rule_.ShouldSpin(runnable_.Last(), cores_); }

void Dispatcher::SampleRunnable() { runnable_.Get(MonotonicNs()); }

bool Dispatcher::SpinForWork() {
  spinning_ = true;
  spinner_signalled_ = false;
  const uint64_t seen = work_signals_.load(std::memory_order_acquire);
  const int64_t window_ns = spin_rule_.window_ns();
  mu_.Unlock();
  const int64_t deadline = MonotonicNs() + window_ns;
  bool signalled = false;
  do {
    sched_yield();
    signalled = work_signals_.load(std::memory_order_acquire) != seen;
  } while (!signalled && MonotonicNs() < deadline);
  mu_.Lock();
  spinning_ = false;
  // A signal that came after the last look is seen here, under the lock.
  return signalled || spinner_signalled_;
}

void Dispatcher::WorkerLoop() {
  Taken taken;
  MutexLock lock(mu_);
  // A worker whose spin found nothing sleeps until woken: it spins again only after work.
  bool may_spin = true;
  while (!stop_) {
    if (!handoff_.empty()) {
      taken = std::move(handoff_.front());
      handoff_.pop_front();
      lock.Unlock();
      Run(&taken, false);
      SampleRunnable();
      lock.Lock();
      may_spin = true;
      continue;
    }
    sched::Decision d = TakeLocked(&taken, false);
    if (d.kind == sched::Decision::Kind::kDispatch) {
      lock.Unlock();
      Run(&taken, false);
      SampleRunnable();
      lock.Lock();
      may_spin = true;
      continue;
    }
    // Nothing to run: the workers' idle gap opens (WorkerSpinRule), unless one is open.
    if (!spin_rule_.gap_open()) spin_rule_.Idle(MonotonicNs());
    if (d.kind == sched::Decision::Kind::kSleepUntil) {
      int64_t wait_ns = d.wake_ns - clock_->NowNs();
      if (wait_ns > 0) work_cv_.WaitFor(mu_, std::chrono::nanoseconds(wait_ns));
    } else if (may_spin && !spinning_ && SpinNowLocked()) {
      may_spin = SpinForWork();
    } else {
      work_cv_.Wait(mu_);
      may_spin = true;
    }
  }
}

void Dispatcher::AddApp(uint32_t app, uint32_t weight) {
  MutexLock lock(mu_);
  scheduler_->SetAppWeight(app, weight);
}

void Dispatcher::RemoveApp(uint32_t app) {
  MutexLock lock(mu_);
  scheduler_->RemoveApp(app);
  apps_removed_.fetch_add(1, std::memory_order_relaxed);
}

std::vector<uint32_t> Dispatcher::AppsHeld() {
  MutexLock lock(mu_);
  return scheduler_->AppsHeld();
}

nlohmann::json Dispatcher::SchedulerConfig() {
  MutexLock lock(mu_);
  return scheduler_->EffectiveConfig();
}

void Dispatcher::Drain() {
  MutexLock lock(mu_);
  drain_cv_.Wait(mu_, [this]() REQUIRES(mu_) { return QuietLocked(); });
}

bool Dispatcher::DrainUntil(std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(mu_);
  return drain_cv_.WaitUntil(mu_, deadline, [this]() REQUIRES(mu_) { return QuietLocked(); });
}

void Dispatcher::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    work_signals_.fetch_add(1, std::memory_order_release);  // ends a spin at once
  }
  work_cv_.NotifyAll();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
}

}  // namespace iorelay::daemon
