#include "daemon/pipe_mover.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <utility>

namespace iorelay::daemon {
namespace {

constexpr unsigned kEntries = 256;
constexpr uint64_t kStopId = 0;  // the NOP that ends the completion thread

}  // namespace

Result<std::unique_ptr<PipeMover>> PipeMover::Create() {
  std::unique_ptr<PipeMover> m(new PipeMover());
  m->null_fd_ = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (m->null_fd_ < 0) return Status::LastError("open /dev/null");
  const int err = io_uring_queue_init(kEntries, &m->ring_, 0);
  if (err < 0) return Status::FromErrno(-err, "io_uring_queue_init");
  m->ring_ready_ = true;
  m->reaper_ = std::thread([p = m.get()] { p->Reap(); });
  return m;
}

PipeMover::~PipeMover() {
  Stop();
  if (ring_ready_) io_uring_queue_exit(&ring_);
  // Only now are the dropped callbacks' descriptors closed: the ring is gone, so no kernel
  // worker starts one of its moves on a reused descriptor number.
  std::unordered_map<uint64_t, Done> dropped;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    dropped.swap(pending_);
  }
  dropped.clear();
  if (null_fd_ >= 0) ::close(null_fd_);
}

void PipeMover::Stop() {
  std::call_once(stop_once_, [this] {
    if (!reaper_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(submit_mu_);
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      while (sqe == nullptr) {  // (full: what is queued goes in first)
        io_uring_submit(&ring_);
        sqe = io_uring_get_sqe(&ring_);
      }
      io_uring_prep_nop(sqe);
      io_uring_sqe_set_data64(sqe, kStopId);
      io_uring_submit(&ring_);
    }
    reaper_.join();
  });
}

void PipeMover::Submit(const std::function<void(io_uring_sqe*)>& prep, Done done) {
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    id = next_id_++;
    pending_.emplace(id, std::move(done));
  }
  std::lock_guard<std::mutex> lock(submit_mu_);
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  while (sqe == nullptr) {
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  prep(sqe);
  sqe->flags |= IOSQE_ASYNC;  // never tried inline, on the submitting thread
  io_uring_sqe_set_data64(sqe, id);
  // EBUSY: completions wait to be reaped, which the completion thread does.
  for (int r = io_uring_submit(&ring_); r == -EINTR || r == -EAGAIN || r == -EBUSY;
       r = io_uring_submit(&ring_)) {
    std::this_thread::yield();
  }
}

void PipeMover::Splice(int from, int to, size_t n, Done done) {
  Submit(
      [&](io_uring_sqe* sqe) {
        io_uring_prep_splice(sqe, from, -1, to, -1, static_cast<unsigned>(n),
                             SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      },
      std::move(done));
}

void PipeMover::Read(int from, void* buf, size_t n, Done done) {
  Submit(
      [&](io_uring_sqe* sqe) { io_uring_prep_read(sqe, from, buf, static_cast<unsigned>(n), 0); },
      std::move(done));
}

void PipeMover::Discard(int from, size_t n, Done done) {
  Splice(from, null_fd_, n, std::move(done));
}

Result<size_t> PipeMover::SpliceWithin(int from, int to, size_t n, std::chrono::nanoseconds wait,
                                       std::shared_ptr<void> keep) {
  struct Waiter {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    Result<size_t> result = Status::FromErrno(ETIMEDOUT, "pipe move");
  };
  auto waiter = std::make_shared<Waiter>();
  Splice(from, to, n, [waiter, keep = std::move(keep)](Result<size_t> r) {
    std::lock_guard<std::mutex> lock(waiter->mu);
    waiter->result = std::move(r);
    waiter->done = true;
    waiter->cv.notify_one();
  });
  std::unique_lock<std::mutex> lock(waiter->mu);
  if (!waiter->cv.wait_for(lock, wait, [&] { return waiter->done; })) {
    return Status::FromErrno(ETIMEDOUT, "the client's pipe stayed locked");
  }
  return std::move(waiter->result);
}

size_t PipeMover::in_progress() {
  std::lock_guard<std::mutex> lock(pending_mu_);
  return pending_.size();
}

void PipeMover::Reap() {
  for (;;) {
    io_uring_cqe* cqe = nullptr;
    const int err = io_uring_wait_cqe(&ring_, &cqe);
    if (err == -EINTR || err == -EAGAIN) continue;
    if (err < 0) return;  // (the ring is unusable: pending moves stay pending)
    const uint64_t id = io_uring_cqe_get_data64(cqe);
    const int res = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    if (id == kStopId) return;
    Done done;
    {
      std::lock_guard<std::mutex> lock(pending_mu_);
      auto it = pending_.find(id);
      if (it == pending_.end()) continue;
      done = std::move(it->second);
      pending_.erase(it);
    }
    done(res >= 0 ? Result<size_t>(static_cast<size_t>(res))
                  : Result<size_t>(Status::FromErrno(-res, "pipe move")));
  }
}

}  // namespace iorelay::daemon
