// Linux AIO through libaio (io_setup, io_submit, io_getevents, io_cancel, io_destroy) on
// forwarded descriptors: the kernel cannot take a request on a forwarded descriptor's
// placeholder, so a positional read or write on one is sent to the daemon (iorelay_submit_*, in
// flight there until its event is taken, so a context's requests queue and merge as fio's
// libaio engine queues them; within the process's budget of such requests, TakeAsyncSlot); a
// vectored read or write, fsync, fdatasync, a request beyond the budget and one asking for an
// eventfd signal (IOCB_FLAG_RESFD) are carried out in io_submit and their events wait in the
// context. io_getevents hands out the context's forwarded events and the kernel's. Requests on
// other descriptors are libaio's as they are. Raw io_submit system calls, io_pgetevents and
// io_uring are not seen (EBADF).
#include <dlfcn.h>
#include <linux/aio_abi.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <list>
#include <memory>
#include <thread>
#include <unordered_map>

#include "common/mutex.h"
#include "preload/poll_wait.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

// libaio's types are the kernel's ABI (linux/aio_abi.h) under other names.
using io_context_t = void*;
using SetupFn = int (*)(int, io_context_t*);
using SubmitFn = int (*)(io_context_t, long, struct iocb**);
using GetEventsFn = int (*)(io_context_t, long, long, struct io_event*, struct timespec*);
using CancelFn = int (*)(io_context_t, struct iocb*, struct io_event*);
using DestroyFn = int (*)(io_context_t);

template <class F>
F Next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// A forwarded request of a context: in flight at the daemon (`request`), or done (`result`).
// Its event's data and object are taken at submission, as the kernel copies an iocb.
struct Forwarded {
  __u64 data, obj;
  FdTable::Ref entry;                  // keeps the file open until the event is taken
  iorelay_request* request = nullptr;  // null once done
  long long result = 0;
  bool waited = false;  // a thread waits for it outside the context's lock
};

struct Context {
  iorelay::Mutex mu;                             // never held across a call that blocks
  std::list<Forwarded> requests GUARDED_BY(mu);  // in submission order
  bool kernel_requests GUARDED_BY(mu) = false;   // the kernel got some since registration
  bool destroyed GUARDED_BY(mu) = false;         // io_destroy was called
};
using ContextRef = std::shared_ptr<Context>;  // (a thread in io_getevents outlives io_destroy)

// The contexts made by io_setup while the interposer is active, and those that got a
// forwarded request (libaio's io_queue_init may make one without our io_setup). Others are
// libaio's alone.
iorelay::Mutex g_mu;
std::unordered_map<io_context_t, ContextRef>* g_contexts GUARDED_BY(g_mu) = nullptr;

ContextRef Find(io_context_t ctx) {
  iorelay::MutexLock lock(g_mu);
  if (g_contexts == nullptr) return nullptr;
  auto it = g_contexts->find(ctx);
  return it == g_contexts->end() ? nullptr : it->second;
}

ContextRef FindOrAdd(io_context_t ctx) {
  iorelay::MutexLock lock(g_mu);
  if (g_contexts == nullptr) g_contexts = new std::unordered_map<io_context_t, ContextRef>;
  ContextRef& c = (*g_contexts)[ctx];
  if (c == nullptr) c = std::make_shared<Context>();
  return c;
}

// A kernel wait is cut into slices so that a forwarded request submitted meanwhile (by another
// thread) is seen.
constexpr auto kKernelSlice = std::chrono::milliseconds(10);

// 0, or the errno io_submit answers for an iocb it cannot take on a forwarded descriptor.
int Refusal(const struct iocb* cb, const FdTable::Ref& entry) {
  if (!entry || entry->file == nullptr) return EBADF;
  if (cb->aio_rw_flags != 0) return EINVAL;  // (RWF_* are not forwarded)
  switch (cb->aio_lio_opcode) {
    case IOCB_CMD_PREAD:
    case IOCB_CMD_PWRITE:
    case IOCB_CMD_PREADV:
    case IOCB_CMD_PWRITEV:
    case IOCB_CMD_FSYNC:
    case IOCB_CMD_FDSYNC:
      return 0;
    default:
      return EINVAL;
  }
}

// One forwarded iocb started, or carried out at once.
Forwarded Start(FdTable::Ref entry, const struct iocb* cb) {
  Forwarded f{cb->aio_data, reinterpret_cast<__u64>(cb), std::move(entry)};
  iorelay_file* file = f.entry->file;
  void* buf = reinterpret_cast<void*>(cb->aio_buf);
  const auto* iov = reinterpret_cast<const struct iovec*>(cb->aio_buf);
  const int iovcnt = static_cast<int>(cb->aio_nbytes);
  const bool positional =
      cb->aio_lio_opcode == IOCB_CMD_PREAD || cb->aio_lio_opcode == IOCB_CMD_PWRITE;
  if (positional && (cb->aio_flags & IOCB_FLAG_RESFD) == 0 && TakeAsyncSlot()) {
    const int rc =
        cb->aio_lio_opcode == IOCB_CMD_PREAD
            ? iorelay_submit_pread(file, buf, cb->aio_nbytes, cb->aio_offset, &f.request)
            : iorelay_submit_pwrite(file, buf, cb->aio_nbytes, cb->aio_offset, &f.request);
    if (rc == 0) return f;
    ReturnAsyncSlot();
  }
  switch (cb->aio_lio_opcode) {
    case IOCB_CMD_PREAD:
      f.result = iorelay_pread(file, buf, cb->aio_nbytes, cb->aio_offset);
      break;
    case IOCB_CMD_PWRITE:
      f.result = iorelay_pwrite(file, buf, cb->aio_nbytes, cb->aio_offset);
      break;
    case IOCB_CMD_PREADV:
      f.result = iorelay_preadv(file, iov, iovcnt, cb->aio_offset);
      break;
    case IOCB_CMD_PWRITEV:
      f.result = iorelay_pwritev(file, iov, iovcnt, cb->aio_offset);
      break;
    default:  // IOCB_CMD_FSYNC, IOCB_CMD_FDSYNC (Refusal let nothing else through)
      f.result = iorelay_fsync(file, cb->aio_lio_opcode == IOCB_CMD_FDSYNC);
  }
  if (cb->aio_flags & IOCB_FLAG_RESFD) {
    const uint64_t one = 1;  // the eventfd's count, as the kernel adds it on completion
    (void)!::write(static_cast<int>(cb->aio_resfd), &one, sizeof one);
  }
  return f;
}

// The request is done with `result`: its slot of the budget returned.
void Finish(Forwarded* f, ssize_t result) {
  f->result = result;
  f->request = nullptr;
  ReturnAsyncSlot();
}

// The request's result taken (it is ready, or the caller waits for it).
void Settle(Forwarded* f) { Finish(f, iorelay_request_wait(f->request)); }

// Moves the context's done forwarded events into `out` (at most `room`), in submission order,
// taking the results that have arrived. Under c->mu.
long TakeDone(Context* c, struct io_event* out, long room) REQUIRES(c->mu) {
  long got = 0;
  for (auto it = c->requests.begin(); it != c->requests.end() && got < room;) {
    if (it->waited) {
      ++it;
      continue;
    }
    if (it->request != nullptr && iorelay_request_ready(it->request)) Settle(&*it);
    if (it->request == nullptr) {
      out[got++] = {it->data, it->obj, it->result, 0};
      it = c->requests.erase(it);
    } else {
      ++it;
    }
  }
  return got;
}

}  // namespace

extern "C" {

IORELAY_EXPORT int io_submit(io_context_t ctx, long nr, struct iocb** cbs) {
  static const auto real = Next<SubmitFn>("io_submit");
  if (real == nullptr) return -ENOSYS;
  if (g_client == nullptr || nr <= 0 || cbs == nullptr) return real(ctx, nr, cbs);
  auto forwarded = [&](long i) {
    return cbs[i] != nullptr && IsForwardedFd(static_cast<int>(cbs[i]->aio_fildes));
  };
  ContextRef c = Find(ctx);
  long done = 0;
  while (done < nr) {
    // A run of requests on other descriptors goes to the kernel as one call (a null iocb too:
    // the kernel's EFAULT).
    long run = 0;
    while (done + run < nr && !forwarded(done + run)) ++run;
    if (run > 0) {
      const int sent = real(ctx, run, cbs + done);
      if (sent < 0) return done > 0 ? static_cast<int>(done) : sent;
      if (c != nullptr && sent > 0) {
        iorelay::MutexLock lock(c->mu);
        c->kernel_requests = true;
      }
      done += sent;
      if (sent < run) break;
      continue;
    }
    const struct iocb* cb = cbs[done];
    FdTable::Ref entry = g_table.Acquire(static_cast<int>(cb->aio_fildes));
    if (const int refused = Refusal(cb, entry); refused != 0) {
      return done > 0 ? static_cast<int>(done) : -refused;
    }
    Forwarded f = Start(std::move(entry), cb);
    if (c == nullptr) c = FindOrAdd(ctx);
    iorelay::MutexLock lock(c->mu);
    c->requests.push_back(std::move(f));
    ++done;
  }
  return static_cast<int>(done);
}

IORELAY_EXPORT int io_getevents(io_context_t ctx, long min_nr, long nr, struct io_event* events,
                                struct timespec* timeout) {
  static const auto real = Next<GetEventsFn>("io_getevents");
  if (real == nullptr) return -ENOSYS;
  ContextRef c = Find(ctx);
  if (c == nullptr || nr <= 0 || min_nr > nr) return real(ctx, min_nr, nr, events, timeout);
  PollWait wait(timeout);
  long got = 0;
  for (;;) {
    bool pending = false, kernel = false;
    Forwarded* oldest = nullptr;  // to wait for outside the lock
    {
      iorelay::MutexLock lock(c->mu);
      if (c->destroyed) return got > 0 ? static_cast<int>(got) : -EINVAL;
      got += TakeDone(c.get(), events + got, nr - got);
      kernel = c->kernel_requests;
      for (Forwarded& f : c->requests) {
        if (f.request == nullptr) continue;
        pending = true;
        if (oldest == nullptr && !f.waited) oldest = &f;
      }
      // Only the daemon's requests, and no deadline: block on the oldest (the daemon serves
      // them in order). Otherwise look again after a while.
      if (got >= min_nr || kernel || timeout != nullptr) oldest = nullptr;
      if (oldest != nullptr) oldest->waited = true;
    }
    if (pending && oldest == nullptr && got < nr) {  // the kernel's done ones (its ring)
      struct timespec now = {0, 0};
      const int k = real(ctx, 0, nr - got, events + got, &now);
      if (k < 0) return got > 0 ? static_cast<int>(got) : k;
      got += k;
    }
    if (got >= min_nr || wait.Expired()) return static_cast<int>(got);
    if (!pending) {  // only the kernel's can come now: its own wait, a slice at a time
      struct timespec slice = wait.Left(kKernelSlice);
      const int k = real(ctx, min_nr - got, nr - got, events + got, &slice);
      if (k < 0) return got > 0 ? static_cast<int>(got) : k;
      got += k;
      continue;
    }
    if (oldest != nullptr) {
      const ssize_t result = iorelay_request_wait(oldest->request);
      iorelay::MutexLock lock(c->mu);
      Finish(oldest, result);
      oldest->waited = false;
      continue;
    }
    wait.Sleep();
  }
}

// A request sent to the daemon cannot be called back: its event comes from io_getevents, as
// for a kernel request that is past cancelling.
IORELAY_EXPORT int io_cancel(io_context_t ctx, struct iocb* cb, struct io_event* event) {
  static const auto real = Next<CancelFn>("io_cancel");
  if (real == nullptr) return -ENOSYS;
  if (ContextRef c = Find(ctx)) {
    iorelay::MutexLock lock(c->mu);
    for (const Forwarded& f : c->requests) {
      if (f.obj == reinterpret_cast<__u64>(cb)) return -EAGAIN;
    }
  }
  return real(ctx, cb, event);
}

// The context's forwarded requests are waited for (their buffers must not be written after the
// context is gone), then libaio's.
IORELAY_EXPORT int io_destroy(io_context_t ctx) {
  static const auto real = Next<DestroyFn>("io_destroy");
  if (real == nullptr) return -ENOSYS;
  ContextRef c;
  {
    iorelay::MutexLock lock(g_mu);
    if (g_contexts != nullptr) {
      if (auto it = g_contexts->find(ctx); it != g_contexts->end()) {
        c = std::move(it->second);
        g_contexts->erase(it);
      }
    }
  }
  if (c != nullptr) {
    iorelay::MutexLock lock(c->mu);
    c->destroyed = true;  // (a thread in io_getevents returns EINVAL, as from the kernel)
    for (;;) {
      bool waited = false;
      for (Forwarded& f : c->requests) {
        if (f.request != nullptr && !f.waited) Settle(&f);
        waited |= f.waited;
      }
      if (!waited) break;
      lock.Unlock();  // another thread waits for one of them: until it has it
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      lock.Lock();
    }
  }
  return real(ctx);
}

IORELAY_EXPORT int io_setup(int max_events, io_context_t* ctx) {
  static const auto real = Next<SetupFn>("io_setup");
  if (real == nullptr) return -ENOSYS;
  const int rc = real(max_events, ctx);
  if (rc == 0 && g_client != nullptr && ctx != nullptr) FindOrAdd(*ctx);
  return rc;
}

}  // extern "C"
