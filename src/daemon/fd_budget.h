// The daemon-wide bound on descriptors of clients' files: they may not use the last
// descriptors of the process's RLIMIT_NOFILE (a reserve of a tenth of it, at least 256, at
// most half), which stay for accepting connections, their transports (sockets, shared memory,
// pipes) and the daemon's own short-lived needs; and one session may not use the last of the
// rest (as many again, at most half of it), which stay for other sessions. So one session
// opening files until it gets EMFILE (its --max-open-files may be above the process limit)
// leaves other clients able to connect and open files. docs/daemon.md, "Open files".
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace iorelay::daemon {

class FdBudget {
 public:
  // The reserve kept out of a limit of `nofile` descriptors (at most half of them).
  static uint64_t ReserveOf(uint64_t nofile);
  // Bounds clients' files by a descriptor limit of `nofile` (the soft RLIMIT_NOFILE when 0).
  // Until called, they are bounded only per session.
  void SetLimit(uint64_t nofile = 0);
  // How many descriptors clients' files may use (0: unbounded).
  uint64_t file_limit() const { return file_limit_; }
  // How many files one session may hold: `per_session` (--max-open-files), or less, so that
  // one session leaves other sessions some of file_limit().
  uint64_t SessionLimit(uint64_t per_session) const {
    return session_limit_ == 0 ? per_session : std::min(per_session, session_limit_);
  }
  // Before opening a file for a client: false when clients' files already use file_limit()
  // descriptors (the open gets EMFILE). Else the file counts until Give.
  bool Take();
  void Give() { files_.fetch_sub(1, std::memory_order_relaxed); }
  // After the open: false when the descriptor it got is in the reserve (the kernel gives the
  // lowest free one, so all below it are in use, by files or connections): the file is closed
  // and the open gets EMFILE.
  bool Fits(int fd) const { return file_limit_ == 0 || static_cast<uint64_t>(fd) < file_limit_; }
  uint64_t files() const { return files_.load(std::memory_order_relaxed); }

 private:
  uint64_t file_limit_ = 0;
  uint64_t session_limit_ = 0;
  std::atomic<uint64_t> files_{0};
};

// Raises the soft RLIMIT_NOFILE to the hard limit (at most fs.nr_open); returns the soft limit
// before and after.
struct NofileLimits {
  uint64_t before = 0;
  uint64_t after = 0;
  uint64_t hard = 0;
};
NofileLimits RaiseNofileLimit();

}  // namespace iorelay::daemon
