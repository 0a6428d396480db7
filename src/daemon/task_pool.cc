// TaskPool: a queue and a fixed set of threads.
#include "daemon/task_pool.h"

namespace iorelay::daemon {

TaskPool::TaskPool(int threads) : inline_(threads == 0) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

void TaskPool::Post(std::function<void()> task) {
  if (inline_) {
    task();
    return;
  }
  {
    MutexLock lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.NotifyOne();
}

void TaskPool::Loop() {
  MutexLock lock(mu_);
  for (;;) {
    cv_.Wait(mu_, [this]() REQUIRES(mu_) { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, and nothing left
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.Unlock();
    task();
    lock.Lock();
  }
}

void TaskPool::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace iorelay::daemon
