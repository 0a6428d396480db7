// A few threads for handler calls that may block in the backend (open, fsync, readdir...), so
// that an event loop never waits for the file system on behalf of one connection.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;  // guarded by mu_
  bool stop_ = false;                        // guarded by mu_
  std::vector<std::thread> threads_;
  bool inline_ = false;  // no threads: Post runs the task itself
};

}  // namespace iorelay::daemon
