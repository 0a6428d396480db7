#include "daemon/pipe_mover.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <utility>

namespace iorelay::daemon {
namespace {

constexpr unsigned kEntries = 64;
constexpr uint64_t kTimeoutId = 0;  // a linked timeout's own completion (ids start at 1)
constexpr int64_t kReadLimitS = 1;

}  // namespace

Result<std::unique_ptr<PipeMover>> PipeMover::Create() {
  std::unique_ptr<PipeMover> m(new PipeMover());
  m->null_fd_ = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (m->null_fd_ < 0) return Status::LastError("open /dev/null");
  m->event_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (m->event_fd_ < 0) return Status::LastError("eventfd");
  const int err = io_uring_queue_init(kEntries, &m->ring_, 0);
  if (err < 0) return Status::FromErrno(-err, "io_uring_queue_init");
  m->ring_ready_ = true;
  const int reg = io_uring_register_eventfd(&m->ring_, m->event_fd_);
  if (reg < 0) return Status::FromErrno(-reg, "io_uring_register_eventfd");
  return m;
}

namespace {

struct ThreadMover {
  std::unique_ptr<PipeMover> mover;
  bool tried = false;  // (where io_uring is refused, once is enough)
};
thread_local ThreadMover this_thread_mover;

}  // namespace

PipeMover* PipeMover::ForThisThread() {
  ThreadMover& t = this_thread_mover;
  if (t.mover == nullptr && !t.tried) {
    t.tried = true;
    Result<std::unique_ptr<PipeMover>> m = Create();
    if (m.ok()) t.mover = std::move(*m);
  }
  return t.mover.get();
}

std::unique_ptr<PipeMover> PipeMover::TakeThisThreads() {
  this_thread_mover.tried = false;
  return std::move(this_thread_mover.mover);
}

void RetiredMovers::Add(std::unique_ptr<PipeMover> m) {
  if (m == nullptr) return;
  MutexLock lock(mu_);
  movers_.push_back(std::move(m));
}

void RetiredMovers::Reap() {
  MutexLock lock(mu_);
  if (movers_.empty()) return;
  for (auto& m : movers_) m->Reap();
  std::erase_if(movers_, [](const std::unique_ptr<PipeMover>& m) { return m->in_progress() == 0; });
}

size_t RetiredMovers::size() {
  MutexLock lock(mu_);
  return movers_.size();
}

PipeMover*& PipeMover::OfThisLoop() {
  thread_local PipeMover* loop_mover = nullptr;
  return loop_mover;
}

PipeMover::~PipeMover() {
  if (ring_ready_) io_uring_queue_exit(&ring_);
  // Only now are the callbacks of unfinished moves, and the descriptors they hold open, let
  // go: with the ring gone, no kernel worker starts one of its moves on a reused number.
  pending_.clear();
  if (event_fd_ >= 0) ::close(event_fd_);
  if (null_fd_ >= 0) ::close(null_fd_);
}

io_uring_sqe* PipeMover::NextSqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  while (sqe == nullptr) {  // (full: what is queued goes in first)
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  return sqe;
}

void PipeMover::Submit(io_uring_sqe* sqe, Done done) {
  const uint64_t id = next_id_++;
  pending_.emplace(id, std::move(done));
  sqe->flags |= IOSQE_ASYNC;  // never tried inline, on this thread
  io_uring_sqe_set_data64(sqe, id);
  // EBUSY: completions wait to be reaped first.
  for (int r = io_uring_submit(&ring_); r == -EINTR || r == -EAGAIN || r == -EBUSY;
       r = io_uring_submit(&ring_)) {
    if (r == -EBUSY) Reap();
  }
}

void PipeMover::Splice(int from, int to, size_t n, Done done) {
  io_uring_sqe* sqe = NextSqe();
  io_uring_prep_splice(sqe, from, -1, to, -1, static_cast<unsigned>(n),
                       SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
  Submit(sqe, std::move(done));
}

void PipeMover::Read(int from, void* buf, size_t n, Done done) {
  // io_uring waits for a pipe's bytes where read(2) on a non-blocking pipe would say EAGAIN
  // (splice does not), so the read is linked to a timeout: bytes the client announced and
  // did not put end it with ECANCELED instead of holding the connection.
  if (io_uring_sq_space_left(&ring_) < 2) io_uring_submit(&ring_);
  io_uring_sqe* sqe = NextSqe();
  io_uring_prep_read(sqe, from, buf, static_cast<unsigned>(n), 0);
  sqe->flags |= IOSQE_IO_LINK;
  io_uring_sqe* limit = NextSqe();
  __kernel_timespec ts = {kReadLimitS, 0};  // (read by the kernel when submitted, below)
  io_uring_prep_link_timeout(limit, &ts, 0);
  io_uring_sqe_set_data64(limit, kTimeoutId);
  Submit(sqe, std::move(done));
}

void PipeMover::Discard(int from, size_t n, Done done) {
  Splice(from, null_fd_, n, std::move(done));
}

void PipeMover::Complete(io_uring_cqe* cqe) {
  const uint64_t id = io_uring_cqe_get_data64(cqe);
  const int res = cqe->res;
  io_uring_cqe_seen(&ring_, cqe);
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  Done done = std::move(it->second);
  pending_.erase(it);
  done(res >= 0 ? Result<size_t>(static_cast<size_t>(res))
                : Result<size_t>(Status::FromErrno(-res, "pipe move")));
}

void PipeMover::Reap() {
  uint64_t count;
  [[maybe_unused]] ssize_t r = ::read(event_fd_, &count, sizeof count);
  io_uring_cqe* cqe = nullptr;
  while (io_uring_peek_cqe(&ring_, &cqe) == 0 && cqe != nullptr) Complete(cqe);
}

Result<size_t> PipeMover::SpliceWithin(int from, int to, size_t n, std::chrono::nanoseconds wait,
                                       std::shared_ptr<void> keep) {
  bool done = false;
  Result<size_t> result = Status::FromErrno(ETIMEDOUT, "the client's pipe stayed locked");
  const uint64_t id = next_id_;
  Splice(from, to, n, [&done, &result, keep = std::move(keep)](Result<size_t> r) {
    done = true;
    result = std::move(r);
  });
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (!done) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds(0)) break;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    __kernel_timespec ts = {ns / 1'000'000'000, ns % 1'000'000'000};
    io_uring_cqe* cqe = nullptr;
    const int err = io_uring_wait_cqe_timeout(&ring_, &cqe, &ts);
    if (err == 0 && cqe != nullptr) Complete(cqe);
  }
  if (!done) {
    // The callback outlives this call: it must not write to our stack when it runs.
    pending_[id] = [held = std::move(pending_[id])](Result<size_t>) {};
  }
  return result;
}

}  // namespace iorelay::daemon
