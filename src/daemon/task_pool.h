// A few threads for handler calls that may block in the backend (open, fsync, readdir...), so
// that an event loop never waits for the file system on behalf of one connection.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "common/mutex.h"

namespace iorelay::daemon {

class TaskPool {
 public:
  // With 0 threads, Post runs each task at once on the caller (the session fuzz target: every
  // frame is handled before the next is read, so a crash reproduces from one input).
  explicit TaskPool(int threads);
  ~TaskPool() { Stop(); }
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // Runs `task` on one of the threads, in posting order among idle threads.
  void Post(std::function<void()> task);
  // Runs what is queued, then joins the threads. Idempotent.
  void Stop();

 private:
  void Loop();
  Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> tasks_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
  bool inline_ = false;  // no threads: Post runs the task itself
};

}  // namespace iorelay::daemon
