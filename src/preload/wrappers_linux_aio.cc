// Linux AIO through libaio (io_submit, io_getevents, io_cancel, io_destroy) on forwarded
// descriptors: the kernel cannot take a request on a forwarded descriptor's placeholder, so a
// positional read or write on one is sent to the daemon (iorelay_submit_*, in flight there
// until its event is taken, so a context's requests queue and merge as fio's libaio engine
// queues them); a vectored read or write, fsync and fdatasync are carried out in io_submit and
// their events wait in the context. io_getevents hands out the context's forwarded events and
// the kernel's. Requests on other descriptors, and contexts that never saw a forwarded one, are
// libaio's as they are. Raw io_submit system calls and io_uring are not seen (EBADF).
#include <dlfcn.h>
#include <linux/aio_abi.h>
#include <sched.h>
#include <time.h>

#include <cerrno>
#include <chrono>
#include <list>
#include <mutex>
#include <unordered_map>

#include "preload/state.h"

using namespace iorelay::preload;

namespace {

// libaio's types are the kernel's ABI (linux/aio_abi.h) under other names.
using io_context_t = void*;
using SubmitFn = int (*)(io_context_t, long, struct iocb**);
using GetEventsFn = int (*)(io_context_t, long, long, struct io_event*, struct timespec*);
using CancelFn = int (*)(io_context_t, struct iocb*, struct io_event*);
using DestroyFn = int (*)(io_context_t);

template <class F>
F Next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// A forwarded request of a context: in flight at the daemon, or done (its event ready).
struct Forwarded {
  struct iocb* cb;
  FdTable::Ref entry;                  // keeps the file open until the event is taken
  iorelay_request* request = nullptr;  // null once done
  long long result = 0;
};

struct Context {
  std::mutex mu;                  // (a context is used by one thread at a time, as a rule)
  std::list<Forwarded> requests;  // GUARDED_BY(mu); in submission order
  long kernel_inflight = 0;       // GUARDED_BY(mu); submitted to the kernel, event not taken
};

// Every context io_submit has seen, while the interposer is active (a context's entry is
// stable: node-based map, erased by io_destroy only).
std::mutex g_mu;
std::unordered_map<io_context_t, Context>* g_contexts = nullptr;  // GUARDED_BY(g_mu); never freed

Context* Find(io_context_t ctx) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_contexts == nullptr) return nullptr;
  auto it = g_contexts->find(ctx);
  return it == g_contexts->end() ? nullptr : &it->second;
}

Context* FindOrAdd(io_context_t ctx) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_contexts == nullptr) g_contexts = new std::unordered_map<io_context_t, Context>;
  return &(*g_contexts)[ctx];
}

bool Supported(const struct iocb* cb) {
  switch (cb->aio_lio_opcode) {
    case IOCB_CMD_PREAD:
    case IOCB_CMD_PWRITE:
    case IOCB_CMD_PREADV:
    case IOCB_CMD_PWRITEV:
    case IOCB_CMD_FSYNC:
    case IOCB_CMD_FDSYNC:
      return true;
    default:
      return false;
  }
}

struct io_event EventOf(const Forwarded& f) {
  return {f.cb->aio_data, reinterpret_cast<__u64>(f.cb), f.result, 0};
}

// One forwarded iocb started (or, for the calls with no submit form, carried out).
Forwarded Start(FdTable::Ref entry, struct iocb* cb) {
  Forwarded f{cb, std::move(entry)};
  iorelay_file* file = f.entry->file;
  void* buf = reinterpret_cast<void*>(cb->aio_buf);
  const auto* iov = reinterpret_cast<const struct iovec*>(cb->aio_buf);
  int rc = 0;
  switch (cb->aio_lio_opcode) {
    case IOCB_CMD_PREAD:
      rc = iorelay_submit_pread(file, buf, cb->aio_nbytes, cb->aio_offset, &f.request);
      break;
    case IOCB_CMD_PWRITE:
      rc = iorelay_submit_pwrite(file, buf, cb->aio_nbytes, cb->aio_offset, &f.request);
      break;
    case IOCB_CMD_PREADV:
      f.result = iorelay_preadv(file, iov, static_cast<int>(cb->aio_nbytes), cb->aio_offset);
      break;
    case IOCB_CMD_PWRITEV:
      f.result = iorelay_pwritev(file, iov, static_cast<int>(cb->aio_nbytes), cb->aio_offset);
      break;
    case IOCB_CMD_FSYNC:
    case IOCB_CMD_FDSYNC:
      f.result = iorelay_fsync(file, cb->aio_lio_opcode == IOCB_CMD_FDSYNC);
      break;
    default:
      f.result = -EINVAL;
  }
  if (rc < 0) f.result = rc;
  return f;
}

// Moves the context's forwarded events into `out` (at most `room`), in submission order as far
// as they are done; waits for the oldest first when `wait` and none is done. Under c->mu.
long TakeDone(Context* c, struct io_event* out, long room, bool wait) {
  long got = 0;
  for (auto it = c->requests.begin(); it != c->requests.end() && got < room;) {
    if (it->request != nullptr && (wait && got == 0 && it == c->requests.begin())) {
      it->result = iorelay_request_wait(it->request);  // (the daemon serves them all)
      it->request = nullptr;
    } else if (it->request != nullptr && iorelay_request_ready(it->request)) {
      it->result = iorelay_request_wait(it->request);
      it->request = nullptr;
    }
    if (it->request == nullptr) {
      out[got++] = EventOf(*it);
      it = c->requests.erase(it);
    } else {
      ++it;
    }
  }
  return got;
}

bool Expired(const struct timespec* timeout, std::chrono::steady_clock::time_point start) {
  if (timeout == nullptr) return false;
  const auto limit =
      std::chrono::seconds(timeout->tv_sec) + std::chrono::nanoseconds(timeout->tv_nsec);
  return std::chrono::steady_clock::now() - start >= limit;
}

}  // namespace

extern "C" {

IORELAY_EXPORT int io_submit(io_context_t ctx, long nr, struct iocb** cbs) {
  static const auto real = Next<SubmitFn>("io_submit");
  if (real == nullptr) return -ENOSYS;
  if (g_client == nullptr || nr <= 0 || cbs == nullptr) return real(ctx, nr, cbs);
  Context* c = FindOrAdd(ctx);
  std::lock_guard<std::mutex> lock(c->mu);
  long done = 0;
  while (done < nr) {
    // A run of requests on other descriptors goes to the kernel as one call.
    long run = 0;
    // (A null iocb too: the kernel's EFAULT.)
    while (done + run < nr && (cbs[done + run] == nullptr ||
                               !IsForwardedFd(static_cast<int>(cbs[done + run]->aio_fildes)))) {
      ++run;
    }
    if (run > 0) {
      const int sent = real(ctx, run, cbs + done);
      if (sent < 0) return done > 0 ? static_cast<int>(done) : sent;
      c->kernel_inflight += sent;
      done += sent;
      if (sent < run) break;
      continue;
    }
    struct iocb* cb = cbs[done];
    FdTable::Ref entry = g_table.Acquire(static_cast<int>(cb->aio_fildes));
    const int refused = !entry || entry->file == nullptr ? EBADF : Supported(cb) ? 0 : EINVAL;
    if (refused != 0) return done > 0 ? static_cast<int>(done) : -refused;
    c->requests.push_back(Start(std::move(entry), cb));
    ++done;
  }
  return static_cast<int>(done);
}

IORELAY_EXPORT int io_getevents(io_context_t ctx, long min_nr, long nr, struct io_event* events,
                                struct timespec* timeout) {
  static const auto real = Next<GetEventsFn>("io_getevents");
  if (real == nullptr) return -ENOSYS;
  Context* c = Find(ctx);
  if (c == nullptr || nr <= 0 || min_nr > nr) return real(ctx, min_nr, nr, events, timeout);
  std::lock_guard<std::mutex> lock(c->mu);
  if (c->requests.empty()) {  // only the kernel's
    const int k = real(ctx, min_nr, nr, events, timeout);
    if (k > 0) c->kernel_inflight -= k;
    return k;
  }
  const auto start = std::chrono::steady_clock::now();
  long got = 0;
  for (;;) {
    got += TakeDone(c, events + got, nr - got, false);
    if (got < nr) {  // the kernel's that are done (a look at its ring)
      struct timespec now = {0, 0};
      const int k = real(ctx, 0, nr - got, events + got, &now);
      if (k < 0) return got > 0 ? static_cast<int>(got) : k;
      c->kernel_inflight -= k;
      got += k;
    }
    if (got >= min_nr || got == nr || Expired(timeout, start)) return static_cast<int>(got);
    if (c->requests.empty()) {  // only the kernel's left: its own wait, for what is missing
      const int k = real(ctx, min_nr - got, nr - got, events + got, timeout);
      if (k < 0) return got > 0 ? static_cast<int>(got) : k;
      c->kernel_inflight -= k;
      return static_cast<int>(got + k);
    }
    if (c->kernel_inflight <= 0) {
      got += TakeDone(c, events + got, nr - got, true);  // only the daemon's: the oldest
    } else {
      sched_yield();  // both: look at each again
    }
  }
}

// A request sent to the daemon cannot be called back: its event comes from io_getevents, as
// for a kernel request that is past cancelling.
IORELAY_EXPORT int io_cancel(io_context_t ctx, struct iocb* cb, struct io_event* event) {
  static const auto real = Next<CancelFn>("io_cancel");
  if (real == nullptr) return -ENOSYS;
  if (Context* c = Find(ctx)) {
    std::lock_guard<std::mutex> lock(c->mu);
    for (const Forwarded& f : c->requests) {
      if (f.cb == cb) return -EAGAIN;
    }
  }
  return real(ctx, cb, event);
}

// The context's forwarded requests are waited for (their buffers must not be written after the
// context is gone), then libaio's.
IORELAY_EXPORT int io_destroy(io_context_t ctx) {
  static const auto real = Next<DestroyFn>("io_destroy");
  if (real == nullptr) return -ENOSYS;
  if (Context* c = Find(ctx)) {
    {
      std::lock_guard<std::mutex> lock(c->mu);
      for (Forwarded& f : c->requests) {
        if (f.request != nullptr) iorelay_request_wait(f.request);
      }
    }
    std::lock_guard<std::mutex> lock(g_mu);
    g_contexts->erase(ctx);
  }
  return real(ctx);
}

}  // extern "C"
