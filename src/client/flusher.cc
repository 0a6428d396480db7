// Write-behind at the process level: the flusher thread that bounds how long written bytes stay
// unsent, and the flushes of every file that path calls, locks, fork, exec and exit need.
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <vector>

#include "client/client.h"
#include "client/file_buffers.h"

namespace iorelay::client {
namespace {

int Pid() { return static_cast<int>(syscall(SYS_getpid)); }

// A write-behind failure that no call of the application will return any more.
void Report(const iorelay_file* f, int neg_errno) {
  char msg[512];
  const int n = snprintf(msg, sizeof msg, "iorelay: %s: buffered writes were not written: %s\n",
                         f->path.c_str(),
                         neg_errno == -EAGAIN ? "the file was in use" : strerror(-neg_errno));
  if (n > 0) (void)syscall(SYS_write, 2, msg, static_cast<size_t>(std::min<int>(n, sizeof msg)));
}

}  // namespace

void Client::NoteBuffered() {
  buffered_.store(true, std::memory_order_release);
  // Set once this process started its thread (a fork child's AfterForkChild clears it): no
  // getpid system call on every buffered write.
  if (flusher_pid_.load(std::memory_order_relaxed) != 0) return;
  MutexLock l(flusher_mu_);
  const int pid = Pid();
  if (flusher_pid_.load() == pid) return;
  flusher_pid_.store(pid);
  flusher_stop_ = false;
  // The thread takes no signal: the application's handlers run on its own threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  flusher_ = std::make_unique<std::thread>([this] { FlusherLoop(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void Client::FlusherLoop() {
  MutexLock l(flusher_mu_);
  while (!flusher_stop_) {
    flusher_cv_.WaitFor(flusher_mu_, std::chrono::nanoseconds(kWriteBehindDelayNs / 4));
    if (flusher_stop_) break;
    l.Unlock();
    sweeping_.store(true);
    if (fork_hold_.load() == 0 && buffered_.load()) {
      bool left = false;
      {
        MutexLock g(files_mu_);
        const int64_t now = MonotonicNs();
        for (iorelay_file* f : files_) left = FlushIfStale(f, now) || left;
      }
      // Files that still hold bytes keep the flag; a write after this sets it again.
      if (!left) buffered_.store(false);
    }
    sweeping_.store(false);
    l.Lock();
  }
}

int Client::FlushAll(bool report, bool wait) {
  buffered_.store(false, std::memory_order_release);
  if (wait) {
    files_mu_.Lock();
  } else if (!files_mu_.TryLock()) {
    return -EAGAIN;  // (_exit from a signal handler that interrupted a call: not waited for)
  }
  int first = 0;
  for (iorelay_file* f : files_) {
    if (!f->buffers || !f->buffers->write_behind) continue;
    // At exit and exec nothing will report the error later: the file's error is taken.
    const int rc = report ? FlushAndTakeError(f, wait) : FlushWrites(f);
    if (rc < 0 && report) Report(f, rc);
    if (rc < 0 && first == 0) first = rc;
  }
  files_mu_.Unlock();
  return first;
}

void Client::DropWindows() {
  MutexLock g(files_mu_);
  for (iorelay_file* f : files_) DropWindow(f);
}

void Client::AfterForkParent() { fork_hold_.fetch_sub(1); }

Client::~Client() {
  if (flusher_ && flusher_pid_.load() == Pid()) {
    {
      MutexLock l(flusher_mu_);
      flusher_stop_ = true;
    }
    flusher_cv_.NotifyAll();
    flusher_->join();
  } else if (flusher_) {
    (void)flusher_.release();  // the parent's thread, which this process (a child) never had
  }
}

}  // namespace iorelay::client
