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
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void TaskPool::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, and nothing left
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

void TaskPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace iorelay::daemon
