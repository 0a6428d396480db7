// Moves bytes out of and into the pipes a shared-memory client shares with the daemon, without a
// daemon thread ever waiting on the client. The kernel holds a pipe's mutex while it faults in
// the pages of a `vmsplice` into the pipe or of a `read` out of it, for as long as the fault
// lasts, which a client can make forever (a userfaultfd or FUSE mapping it serves); a `splice`
// of the daemon's waits on that mutex even with SPLICE_F_NONBLOCK. So each move here is an
// io_uring operation forced onto the kernel's io-wq workers (IOSQE_ASYNC), and its callback runs
// on the mover's completion thread once the kernel has done it: a stalled move holds one kernel
// worker, not an event loop or a daemon worker (docs/daemon.md, Piped data).
#pragma once

#include <liburing.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "common/status.h"

namespace iorelay::daemon {

class PipeMover {
 public:
  // The bytes moved, or the error of the system call.
  using Done = std::function<void(Result<size_t>)>;

  // Fails where io_uring is not available (a kernel or container that disables it).
  static Result<std::unique_ptr<PipeMover>> Create();
  ~PipeMover();
  PipeMover(const PipeMover&) = delete;
  PipeMover& operator=(const PipeMover&) = delete;

  // splice(from -> to) of up to `n` bytes, SPLICE_F_NONBLOCK. `done` runs on the completion
  // thread; whatever keeps `from` and `to` open must live until it has run (`done` owns it), as
  // the kernel looks the descriptors up when its worker starts.
  void Splice(int from, int to, size_t n, Done done);
  // read(from) of up to `n` bytes into `buf`, which `done` keeps alive likewise.
  void Read(int from, void* buf, size_t n, Done done);
  // Takes up to `n` bytes out of `from` and drops them (a splice into /dev/null).
  void Discard(int from, size_t n, Done done);
  // A splice waited for here, up to `wait`: its result, or ETIMEDOUT while the move goes on
  // (`keep`, which holds the descriptors open, is let go when it ends).
  Result<size_t> SpliceWithin(int from, int to, size_t n, std::chrono::nanoseconds wait,
                              std::shared_ptr<void> keep);
  // Moves submitted and not yet done.
  size_t in_progress();
  // Ends the completion thread; callbacks of moves still in progress are dropped, not run.
  void Stop();

 private:
  PipeMover() = default;
  // Queues the operation `prep` fills in, under the id `done` is kept by.
  void Submit(const std::function<void(io_uring_sqe*)>& prep, Done done);
  void Reap();

  io_uring ring_{};
  bool ring_ready_ = false;
  int null_fd_ = -1;      // /dev/null, for Discard
  std::mutex submit_mu_;  // the submission queue: one submitter at a time
  std::mutex pending_mu_;
  std::unordered_map<uint64_t, Done> pending_;  // guarded by pending_mu_
  uint64_t next_id_ = 1;                        // guarded by pending_mu_
  std::thread reaper_;
  std::once_flag stop_once_;
};

}  // namespace iorelay::daemon
