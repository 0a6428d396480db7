// Pipes for piped data (docs/daemon.md, Piped data): a shared-memory connection's two pipes,
// and the pool of pipes that hold a piped write's data from its arrival to its backend call
// (the scheduler may run a connection's writes in any order, so each takes its data out of the
// connection's pipe as it arrives, by moving page references: no byte is copied).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"

namespace iorelay::daemon {

// Both ends of a pipe, non-blocking and close-on-exec, closed with it.
class Pipe {
 public:
  // A pipe holding at least `min_bytes` (F_SETPIPE_SZ; EPERM past /proc/sys/fs/pipe-max-size
  // or the user's pipe quota, for a daemon without CAP_SYS_RESOURCE).
  static Result<Pipe> Make(size_t min_bytes);
  Pipe() = default;
  Pipe(Pipe&& o) noexcept { *this = std::move(o); }
  Pipe& operator=(Pipe&& o) noexcept;
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() { Close(); }

  int read_fd() const { return read_fd_; }
  int write_fd() const { return write_fd_; }
  // The capacity in bytes (F_GETPIPE_SZ).
  size_t bytes() const { return bytes_; }
  bool valid() const { return read_fd_ >= 0; }
  // Bytes in the pipe now (FIONREAD).
  size_t Held() const;
  // Gives an end away (the caller closes it), e.g. to send it to the client.
  int TakeReadEnd();
  int TakeWriteEnd();
  void Close();

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
  size_t bytes_ = 0;
};

class PipePool;

// A pipe lent by a PipePool to a holder (a connection), given back when destroyed or reset.
class PooledPipe {
 public:
  PooledPipe() = default;
  PooledPipe(PipePool* pool, std::atomic<uint32_t>* holder, Pipe pipe)
      : pool_(pool), holder_(holder), pipe_(std::move(pipe)) {}
  PooledPipe(PooledPipe&& o) noexcept { *this = std::move(o); }
  PooledPipe& operator=(PooledPipe&& o) noexcept;
  ~PooledPipe() { Reset(); }
  void Reset();
  bool valid() const { return pool_ != nullptr; }
  const Pipe& pipe() const { return pipe_; }

 private:
  PipePool* pool_ = nullptr;
  std::atomic<uint32_t>* holder_ = nullptr;  // the holder's count of lent pipes
  Pipe pipe_;
};

// Thread-safe. Pipes of one size, at most kMaxOut lent at once, and at most kMaxPerHolder to one
// holder (a connection, whose many requests in flight must not take them all): each holds two
// of the daemon's descriptors. Past the bounds, a piped write's data is copied out of the
// connection's pipe, and a piped read's data is read into a buffer and sent in the reply's
// tail. A pipe given back empty is kept for the next request, up to kMaxIdle of them (making
// one costs four system calls, a few percent of a 1 MiB read from the page cache); one given
// back holding bytes is closed, so no request ever sees another's data.
class PipePool {
 public:
  static constexpr size_t kMaxOut = 256;
  static constexpr uint32_t kMaxPerHolder = kMaxOut / 4;
  static constexpr size_t kMaxIdle = 8;
  // Pipes of `preferred` bytes where the kernel grants them, else of `fallback`.
  PipePool(size_t preferred, size_t fallback);
  // A pipe of pipe_bytes() (a kept one, or new) for the holder counting its pipes in `holder`;
  // EAGAIN when kMaxOut are lent, or kMaxPerHolder to this holder, or the error making one failed
  // with.
  Result<PooledPipe> Get(std::atomic<uint32_t>* holder);
  size_t pipe_bytes() const { return pipe_bytes_; }
  // Empty pipes kept for the next requests (two descriptors each).
  size_t idle();

 private:
  friend class PooledPipe;
  // Takes back a lent pipe: kept idle when it is empty and fewer than kMaxIdle are, else
  // closed (its bytes, if any, belong to no request now).
  void Put(std::atomic<uint32_t>* holder, Pipe p);

  size_t pipe_bytes_;
  Mutex mu_;
  size_t out_ GUARDED_BY(mu_) = 0;          // lent now
  std::vector<Pipe> idle_ GUARDED_BY(mu_);  // empty pipes to lend again
};

// Moves up to `n` bytes from the pipe `from` into the pipe `to` (page references, never
// waiting): the count moved, short when `from` ran dry or `to` filled up; an error only when
// nothing moved.
Result<size_t> SpliceBetweenPipes(int from, int to, size_t n);
// Moves exactly `n` bytes from the pipe `from` (non-blocking) into a pipe of `pool`. EPROTO
// when fewer are there: the client promised to put them in before sending the frame. Another
// error (no pipe to be had, the splice failing) leaves the bytes in `from`.
// `holder` as for PipePool::Get.
Result<PooledPipe> MovePiped(PipePool& pool, std::atomic<uint32_t>* holder, int from, size_t n);
// Reads exactly `n` bytes from the pipe `from` (non-blocking) into `buf`, or discards them when
// `buf` is null; EPROTO when fewer are there.
Status ReadFromPipe(int from, void* buf, size_t n);

}  // namespace iorelay::daemon
