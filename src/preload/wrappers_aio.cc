// POSIX AIO on forwarded descriptors. glibc runs AIO on its own threads through
// internal calls no interposer sees, so requests on forwarded descriptors are handled
// here. A positional aio_read/aio_write without notification (SIGEV_NONE, as fio's posixaio
// engine submits them) stays in flight at the daemon (iorelay_submit_*) until aio_error,
// aio_return, aio_suspend or aio_cancel takes its result, so many requests queue and merge
// there; other requests (notification wanted, O_APPEND, lio_listio, aio_fsync) are performed
// synchronously in the submitting call, and the aiocb is completed (and notified) before it
// returns. Other descriptors go to libc.
#include <aio.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <new>
#include <vector>

#include "common/mutex.h"
#include "preload/libc_next.h"
#include "preload/poll_wait.h"
#include "preload/ptr_registry.h"
#include "preload/state.h"

using namespace iorelay::preload;

static_assert(sizeof(struct aiocb) == sizeof(struct aiocb64), "x86_64: aiocb64 == aiocb");

namespace {

struct ThreadNotify {
  void (*fn)(union sigval);
  union sigval value;
};

void* RunThreadNotify(void* arg) {
  auto* n = static_cast<ThreadNotify*>(arg);
  n->fn(n->value);
  delete n;
  return nullptr;
}

void Notify(const struct sigevent& ev) {
  if (ev.sigev_notify == SIGEV_SIGNAL) {
    sigqueue(getpid(), ev.sigev_signo, ev.sigev_value);
  } else if (ev.sigev_notify == SIGEV_THREAD && ev.sigev_notify_function != nullptr) {
    auto* n = new (std::nothrow) ThreadNotify{ev.sigev_notify_function, ev.sigev_value};
    if (n == nullptr) return;
    pthread_attr_t attr;
    pthread_attr_t* pattr = ev.sigev_notify_attributes;
    if (pattr == nullptr) {
      pthread_attr_init(&attr);
      pattr = &attr;
    }
    pthread_attr_setdetachstate(pattr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    if (pthread_create(&t, pattr, &RunThreadNotify, n) != 0) delete n;
    if (pattr == &attr) pthread_attr_destroy(&attr);
  }
}

void Complete(struct aiocb* cb, ssize_t rc) {
  cb->__error_code = rc < 0 ? errno : 0;
  cb->__return_value = rc;
  g_aiocbs.Add(cb, cb);
  Notify(cb->aio_sigevent);
}

// A request in flight: g_aiocbs maps its aiocb to this (a completed one maps to itself).
struct InFlight {
  FdTable::Ref entry;  // keeps the file open until the result is taken
  iorelay_request* request;
};

InFlight* Pending(const void* cb) {
  void* v = g_aiocbs.Find(cb);
  return v != nullptr && v != cb ? static_cast<InFlight*>(v) : nullptr;
}

// Held while a request's result is taken, and while one is looked at: two threads asking about
// one aiocb (aio_error from one, aio_suspend from another) take its result once.
iorelay::Mutex g_settle_mu;

// Takes the result of the in-flight request `p` of `cb` (waiting for it) and completes the
// aiocb. Under g_settle_mu.
void SettleLocked(struct aiocb* cb, InFlight* p) REQUIRES(g_settle_mu) {
  const ssize_t rc = iorelay_request_wait(p->request);
  ReturnAsyncSlot();
  delete p;
  cb->__error_code = rc < 0 ? static_cast<int>(-rc) : 0;
  cb->__return_value = rc < 0 ? -1 : rc;
  g_aiocbs.Add(cb, cb);
}

void Settle(struct aiocb* cb) {
  iorelay::MutexLock lock(g_settle_mu);
  if (InFlight* p = Pending(cb)) SettleLocked(cb, p);
}

// Starts a positional request without waiting; false when it must be done synchronously.
bool SubmitInFlight(struct aiocb* cb, bool is_write) {
  if (cb->aio_sigevent.sigev_notify != SIGEV_NONE) return false;
  FdTable::Ref e = g_table.Acquire(cb->aio_fildes);
  if (!e || e->file == nullptr) return false;
  if (is_write && (iorelay_getfl(e->file) & O_APPEND)) return false;
  if (!TakeAsyncSlot()) return false;
  iorelay_request* r = nullptr;
  void* buf = const_cast<void*>(cb->aio_buf);
  const int rc = is_write ? iorelay_submit_pwrite(e->file, buf, cb->aio_nbytes, cb->aio_offset, &r)
                          : iorelay_submit_pread(e->file, buf, cb->aio_nbytes, cb->aio_offset, &r);
  if (rc < 0) {
    ReturnAsyncSlot();
    return false;
  }
  auto* p = new (std::nothrow) InFlight{std::move(e), r};
  if (p == nullptr) {
    Complete(cb, FromClient<ssize_t>(iorelay_request_wait(r)));
    ReturnAsyncSlot();
    return true;
  }
  cb->__error_code = EINPROGRESS;
  g_aiocbs.Add(cb, p);
  return true;
}

int Submit(struct aiocb* cb, bool is_write) {
  Settle(cb);  // an aiocb reused before its result was taken
  if (SubmitInFlight(cb, is_write)) return 0;
  ssize_t rc;
  if (is_write) {
    int fl = fcntl(cb->aio_fildes, F_GETFL);
    // O_APPEND: POSIX appends, ignoring aio_offset.
    rc = (fl >= 0 && (fl & O_APPEND))
             ? write(cb->aio_fildes, const_cast<void*>(cb->aio_buf), cb->aio_nbytes)
             : pwrite(cb->aio_fildes, const_cast<void*>(cb->aio_buf), cb->aio_nbytes,
                      cb->aio_offset);
  } else {
    rc = pread(cb->aio_fildes, const_cast<void*>(cb->aio_buf), cb->aio_nbytes, cb->aio_offset);
  }
  Complete(cb, rc);
  return 0;
}

int SubmitFsync(int op, struct aiocb* cb) {
  if (op != O_SYNC && op != O_DSYNC) return Fail(EINVAL);
  Complete(cb, op == O_DSYNC ? fdatasync(cb->aio_fildes) : fsync(cb->aio_fildes));
  return 0;
}

bool IsOurs(const void* cb) { return g_aiocbs.Find(cb) != nullptr; }

// aio_suspend over a list holding some of ours: 0 once one of the list is complete, EAGAIN when
// `timeout` (may be null) passed first, -1 when none is ours (libc's to answer). With no
// timeout and only ours in flight, waits for the first (the daemon serves them in order);
// otherwise looks again after a while, at ours and at libc's (`real_error`).
template <class RealError>
int Suspend(const struct aiocb* const list[], int n, const struct timespec* timeout,
            RealError real_error) {
  PollWait wait(timeout);
  for (;;) {
    struct aiocb* pending = nullptr;
    bool ours = false, libc = false;
    {
      iorelay::MutexLock lock(g_settle_mu);
      for (int i = 0; i < n; ++i) {
        auto* cb = const_cast<struct aiocb*>(list[i]);
        if (cb == nullptr) continue;
        if (!IsOurs(cb)) {
          libc = true;
          continue;
        }
        ours = true;
        InFlight* p = Pending(cb);
        if (p == nullptr) return 0;  // already complete
        if (iorelay_request_ready(p->request)) {
          SettleLocked(cb, p);
          return 0;
        }
        if (pending == nullptr) pending = cb;
      }
    }
    if (!ours) return -1;
    for (int i = 0; libc && i < n; ++i) {
      if (list[i] != nullptr && !IsOurs(list[i]) && real_error(list[i]) != EINPROGRESS) return 0;
    }
    if (timeout == nullptr && !libc) {
      Settle(pending);
      return 0;
    }
    if (wait.Expired()) return EAGAIN;
    wait.Sleep();
  }
}

// aio_error's answer for one of ours: EINPROGRESS while its reply has not arrived.
int ErrorOf(const struct aiocb* cb) {
  iorelay::MutexLock lock(g_settle_mu);
  if (InFlight* p = Pending(cb)) {
    if (!iorelay_request_ready(p->request)) return EINPROGRESS;
    SettleLocked(const_cast<struct aiocb*>(cb), p);
  }
  return cb->__error_code;
}

// lio_listio: the forwarded requests are all sent, then all waited for, here (their own
// aio_sigevent is not used, as for a list request), so they are in flight together at the
// daemon; the rest go to libc's lio_listio as the same list with the forwarded entries nulled
// out (null entries are ignored).
template <class Cb, class RealLio>
int ListIo(int mode, Cb* const list[], int n, struct sigevent* sig, RealLio real_lio) {
  if (mode != LIO_WAIT && mode != LIO_NOWAIT) return Fail(EINVAL);
  if (n < 0) return Fail(EINVAL);
  std::vector<Cb*> rest(list, list + n);
  std::vector<struct aiocb*> sent;
  bool any_rest = false, any_failed = false;
  for (int i = 0; i < n; ++i) {
    auto* cb = reinterpret_cast<struct aiocb*>(list[i]);
    if (cb == nullptr || cb->aio_lio_opcode == LIO_NOP) continue;
    if (!IsForwardedFd(cb->aio_fildes)) {
      g_aiocbs.Erase(cb);
      any_rest = true;
      continue;
    }
    rest[i] = nullptr;
    if (cb->aio_lio_opcode != LIO_READ && cb->aio_lio_opcode != LIO_WRITE) {
      cb->__error_code = EINVAL;
      cb->__return_value = -1;
      g_aiocbs.Add(cb, cb);
      any_failed = true;
      continue;
    }
    struct sigevent none = cb->aio_sigevent;
    cb->aio_sigevent.sigev_notify = SIGEV_NONE;
    Submit(cb, cb->aio_lio_opcode == LIO_WRITE);
    cb->aio_sigevent = none;
    sent.push_back(cb);
  }
  for (struct aiocb* cb : sent) {
    Settle(cb);
    any_failed |= cb->__error_code != 0;
  }
  int rc = 0;
  if (any_rest) {
    rc = real_lio(mode, rest.data(), n, sig);
  } else if (mode == LIO_NOWAIT && sig != nullptr) {
    Notify(*sig);
  }
  if (rc == 0 && any_failed && mode == LIO_WAIT) return Fail(EIO);
  return rc;
}

}  // namespace

extern "C" {

IORELAY_EXPORT int lio_listio(int mode, struct aiocb* const list[], int n,
                              struct sigevent* sig) noexcept {
  return ListIo(mode, list, n, sig, REAL(lio_listio));
}

IORELAY_EXPORT int lio_listio64(int mode, struct aiocb64* const list[], int n,
                                struct sigevent* sig) noexcept {
  return ListIo(mode, list, n, sig, REAL(lio_listio64));
}

IORELAY_EXPORT int aio_read(struct aiocb* cb) noexcept {
  if (!IsForwardedFd(cb->aio_fildes)) {
    g_aiocbs.Erase(cb);  // reused for a libc request
    return REAL(aio_read)(cb);
  }
  return Submit(cb, false);
}

IORELAY_EXPORT int aio_read64(struct aiocb64* cb64) noexcept {
  auto* cb = reinterpret_cast<struct aiocb*>(cb64);
  if (!IsForwardedFd(cb->aio_fildes)) {
    g_aiocbs.Erase(cb);
    return REAL(aio_read64)(cb64);
  }
  return Submit(cb, false);
}

IORELAY_EXPORT int aio_write(struct aiocb* cb) noexcept {
  if (!IsForwardedFd(cb->aio_fildes)) {
    g_aiocbs.Erase(cb);
    return REAL(aio_write)(cb);
  }
  return Submit(cb, true);
}

IORELAY_EXPORT int aio_write64(struct aiocb64* cb64) noexcept {
  auto* cb = reinterpret_cast<struct aiocb*>(cb64);
  if (!IsForwardedFd(cb->aio_fildes)) {
    g_aiocbs.Erase(cb);
    return REAL(aio_write64)(cb64);
  }
  return Submit(cb, true);
}

IORELAY_EXPORT int aio_fsync(int op, struct aiocb* cb) noexcept {
  if (!IsForwardedFd(cb->aio_fildes)) {
    g_aiocbs.Erase(cb);
    return REAL(aio_fsync)(op, cb);
  }
  return SubmitFsync(op, cb);
}

IORELAY_EXPORT int aio_fsync64(int op, struct aiocb64* cb64) noexcept {
  auto* cb = reinterpret_cast<struct aiocb*>(cb64);
  if (!IsForwardedFd(cb->aio_fildes)) {
    g_aiocbs.Erase(cb);
    return REAL(aio_fsync64)(op, cb64);
  }
  return SubmitFsync(op, cb);
}

IORELAY_EXPORT int aio_error(const struct aiocb* cb) noexcept {
  return IsOurs(cb) ? ErrorOf(cb) : REAL(aio_error)(cb);
}

IORELAY_EXPORT int aio_error64(const struct aiocb64* cb) noexcept {
  return IsOurs(cb) ? ErrorOf(reinterpret_cast<const struct aiocb*>(cb)) : REAL(aio_error64)(cb);
}

IORELAY_EXPORT ssize_t aio_return(struct aiocb* cb) noexcept {
  Settle(cb);
  if (g_aiocbs.Erase(cb) == nullptr) return REAL(aio_return)(cb);
  return cb->__return_value;
}

IORELAY_EXPORT ssize_t aio_return64(struct aiocb64* cb) noexcept {
  Settle(reinterpret_cast<struct aiocb*>(cb));
  if (g_aiocbs.Erase(cb) == nullptr) return REAL(aio_return64)(cb);
  return cb->__return_value;
}

IORELAY_EXPORT int aio_suspend(const struct aiocb* const list[], int n,
                               const struct timespec* timeout) {
  if (g_aiocbs.MaybeContains()) {
    const int rc = Suspend(list, n, timeout, REAL(aio_error));
    if (rc >= 0) return rc == 0 ? 0 : Fail(rc);
  }
  return REAL(aio_suspend)(list, n, timeout);
}

IORELAY_EXPORT int aio_suspend64(const struct aiocb64* const list[], int n,
                                 const struct timespec* timeout) {
  if (g_aiocbs.MaybeContains()) {
    const int rc = Suspend(reinterpret_cast<const struct aiocb* const*>(list), n, timeout,
                           [](const struct aiocb* cb) {
                             return REAL(aio_error64)(reinterpret_cast<const struct aiocb64*>(cb));
                           });
    if (rc >= 0) return rc == 0 ? 0 : Fail(rc);
  }
  return REAL(aio_suspend64)(list, n, timeout);
}

// A request sent to the daemon cannot be called back: cancel waits for it and reports
// AIO_ALLDONE. (With cb null, the requests in flight on fd are left to finish.)
IORELAY_EXPORT int aio_cancel(int fd, struct aiocb* cb) noexcept {
  if (!IsForwardedFd(fd) && (cb == nullptr || !IsOurs(cb))) return REAL(aio_cancel)(fd, cb);
  if (cb != nullptr) Settle(cb);
  return AIO_ALLDONE;
}

IORELAY_EXPORT int aio_cancel64(int fd, struct aiocb64* cb) noexcept {
  if (!IsForwardedFd(fd) && (cb == nullptr || !IsOurs(cb))) return REAL(aio_cancel64)(fd, cb);
  if (cb != nullptr) Settle(reinterpret_cast<struct aiocb*>(cb));
  return AIO_ALLDONE;
}

}  // extern "C"
