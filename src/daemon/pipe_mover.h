// Moves bytes out of and into the pipes a shared-memory client shares with the daemon, without a
// daemon thread ever waiting on the client. The kernel holds a pipe's mutex while it faults in
// the pages of a `vmsplice` into the pipe or of a `read` out of it, for as long as the fault
// lasts, which a client can make forever (a userfaultfd or FUSE mapping it serves); a `splice`
// of the daemon's waits on that mutex even with SPLICE_F_NONBLOCK. So each move here is an
// io_uring operation forced onto the kernel's io-wq workers (IOSQE_ASYNC): a stalled move holds
// a kernel worker, not an event loop or a daemon worker (docs/daemon.md, Piped data).
//
// One mover per thread, used by that thread only: an event loop's, whose completions wake its
// epoll (event_fd) and run their callbacks there (Reap), and a worker's (ForThisThread), which
// waits for each move itself, for a bounded time (SpliceWithin).
#pragma once

#include <liburing.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"

namespace iorelay::daemon {

class PipeMover {
 public:
  // The bytes moved, or the error of the system call.
  using Done = std::function<void(Result<size_t>)>;

  // Fails where io_uring is not available (a kernel or container that disables it).
  static Result<std::unique_ptr<PipeMover>> Create();
  // The calling thread's mover, made on first use; null where io_uring is not available.
  static PipeMover* ForThisThread();
  // Takes the calling thread's mover away (the next ForThisThread makes another): one that
  // gave up waiting for a move, to be kept in RetiredMovers until the move ends.
  static std::unique_ptr<PipeMover> TakeThisThreads();
  // The mover of the event loop running on this thread (the loop sets it), else null.
  static PipeMover*& OfThisLoop();
  ~PipeMover();
  PipeMover(const PipeMover&) = delete;
  PipeMover& operator=(const PipeMover&) = delete;

  // Readable when moves are done: Reap runs their callbacks.
  int event_fd() const { return event_fd_; }
  void Reap();

  // splice(from -> to) of up to `n` bytes, SPLICE_F_NONBLOCK; `done` runs in Reap. Whatever
  // keeps `from` and `to` open must live until then (`done` owns it), as the kernel looks the
  // descriptors up when its worker starts the move.
  void Splice(int from, int to, size_t n, Done done);
  // read(from) of up to `n` bytes into `buf`, which `done` keeps alive likewise.
  void Read(int from, void* buf, size_t n, Done done);
  // Takes up to `n` bytes out of `from` and drops them (a splice into /dev/null).
  void Discard(int from, size_t n, Done done);
  // A splice waited for here, up to `wait`: its result, or ETIMEDOUT while the move goes on
  // (`keep`, which holds the descriptors open, is let go when it ends and is reaped).
  Result<size_t> SpliceWithin(int from, int to, size_t n, std::chrono::nanoseconds wait,
                              std::shared_ptr<void> keep);
  // Moves submitted and not yet reaped.
  size_t in_progress() const { return pending_.size(); }

 private:
  PipeMover() = default;
  io_uring_sqe* NextSqe();
  void Submit(io_uring_sqe* sqe, Done done);
  // Runs the callback of one completion.
  void Complete(io_uring_cqe* cqe);

  io_uring ring_{};
  bool ring_ready_ = false;
  int event_fd_ = -1;
  int null_fd_ = -1;  // /dev/null, for Discard
  std::unordered_map<uint64_t, Done> pending_;
  uint64_t next_id_ = 1;
};

// Movers whose thread gave up waiting for a move (SpliceWithin timed out), kept until their
// moves end: the event loops' ticks reap them (any thread; one at a time).
class RetiredMovers {
 public:
  void Add(std::unique_ptr<PipeMover> m);
  // Runs the callbacks of the moves that ended, and drops the movers with none left.
  void Reap();
  size_t size();

 private:
  Mutex mu_;
  std::vector<std::unique_ptr<PipeMover>> movers_ GUARDED_BY(mu_);
};

}  // namespace iorelay::daemon
