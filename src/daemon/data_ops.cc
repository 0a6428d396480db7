// Data requests (pread, pwrite, read, write): admission into the scheduler, then execution
// of the dispatches it hands out, as one backend call each, and the replies.

#include <fmt/core.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>

#include "common/shm_ring.h"
#include "daemon/core.h"
#include "daemon/pipe_mover.h"
#include "daemon/replier.h"
#include "daemon/work.h"
#include "dispatch/plan.h"

namespace iorelay::daemon {
namespace {

using proto::Op;

bool IsRead(Op op) { return op == Op::kPread || op == Op::kRead; }

// What a data request counts for against the in-flight limits: its length, but at least a
// pool buffer's 4 KiB, so that requests of 0 or 1 byte, which cost a buffer, a Work and the
// scheduler's state all the same, cannot be queued without bound.
uint64_t ChargeOf(uint64_t length) { return std::max<uint64_t>(length, 4096); }

// What the trace and the counters record of `w`, taken before its reply goes. It drops the
// request's reference to the file: a close the client sends on seeing the reply must find its
// own reference the last, so that it reports the backend's close error (OpenFile::Release).
Outcome TakeOutcome(Work* w, int64_t start_ns) {
  Outcome o;
  o.handle = w->handle;
  o.offset = w->offset;
  o.size = w->length;
  o.queue_ns = start_ns - w->arrival_ns;
  o.file = w->file->key();
  o.open_flags = w->file->flags();
  o.dispatch = w->dispatch;
  w->file.reset();
  return o;
}

// Records `w`'s result `r` (counters, trace) before its reply goes, so that a client reading
// the counters once it has its reply finds the request counted.
void Account(Core& core, const Work& w, const Result<size_t>& r, Outcome o) {
  if (!r.ok()) {
    o.error = r.status().code();
  } else if (IsRead(w.op)) {
    o.bytes_read = *r;
  } else {
    o.bytes_written = *r;
  }
  RecordRequest(core, *w.session, w.op, w.arrival_ns, o);
}

// After `w`'s reply has gone: its charge, its buffer and its pipe go back, and it is no longer
// outstanding.
void Release(Core& core, Work* w) {
  w->conn->Uncharge(ChargeOf(w->length));
  EndRequest(*w->conn);
  core.buffers.Put(std::move(w->data));
  w->piped.Reset();
}

// Answers `w` with `r`, and accounts for it.
void Answer(Core& core, Work* w, Result<size_t> r, Outcome o) {
  Account(core, *w, r, o);
  // A write's data goes back before its reply: when it was lent by a shared-memory ring, the
  // client's next request then finds that room free.
  if (!IsRead(w->op)) core.buffers.Put(std::move(w->data));
  if (!r.ok()) {
    w->conn->ReplyError(w->reply_op, w->client_id, r.status().code());
  } else if (IsRead(w->op)) {
    // The buffer goes with the reply (no copy); the connection gives it back to the pool.
    w->conn->SendData(w->reply_op, w->client_id, {}, std::move(w->data), *r);
  } else {
    // CountReply is one u64; encoded by hand on this hot path (no vector, and no g++ 12
    // -Warray-bounds false positive on vector::insert).
    uint64_t count = *r;
    uint8_t fields[sizeof count];
    std::memcpy(fields, &count, sizeof count);
    w->conn->Send(w->reply_op, w->client_id, 0, fields);
  }
  Release(core, w);
}

// The piped part of a write: spliced from its pipe into the file, or, where the backend or the
// file system cannot splice (O_DIRECT from memory it does not accept, too), copied out of the pipe
// and written as from a socket.
Result<size_t> WriteFromItsPipe(Core& core, Work* w) {
  const int fd = w->file->fd();
  const int pipe = w->piped.pipe().read_fd();
  const uint64_t n = w->piped_bytes;
  Result<size_t> r = core.backend->WriteFromPipe(fd, pipe, n, w->offset);
  if (r.ok() || (r.status().code() != ENOTSUP && r.status().code() != EINVAL) ||
      w->piped.pipe().Held() != n) {
    if (r.ok()) core.stats->conn.shm_writes_piped.fetch_add(1, std::memory_order_relaxed);
    return r;
  }
  Buffer copy = core.buffers.Get(n);
  if (copy.data() == nullptr) return Status::FromErrno(ENOMEM, "write buffer");
  Status drained = ReadFromPipe(pipe, copy.data(), n);
  if (drained.ok()) r = core.backend->Pwrite(fd, copy.data(), n, w->offset);
  core.buffers.Put(std::move(copy));
  return drained.ok() ? r : Result<size_t>(drained);
}

// A piped write: its piped part, then the rest from its tail; the count of the contiguous
// prefix written, as a local write that fails part way reports.
Result<size_t> WritePiped(Core& core, Work* w) {
  const uint64_t piped = w->piped_bytes;
  Result<size_t> r = WriteFromItsPipe(core, w);
  if (!r.ok() || *r < piped || piped == w->length) return r;
  Result<size_t> rest =
      core.backend->Pwrite(w->file->fd(), w->data.data(), w->length - piped, w->offset + piped);
  return rest.ok() ? piped + *rest : piped;
}

// A kPwriteRanges request: its ranges in the table's order, one backend call each, up to the
// first that fails or is short; the bytes written up to there (a failure of the first range is
// the result).
Result<size_t> WriteRanges(backend::Backend& b, int fd, const Work& w) {
  const auto* table = reinterpret_cast<const uint8_t*>(w.data.data());
  const uint8_t* bytes = table + w.ranges * proto::kWriteRangeEntryBytes;
  size_t done = 0;
  for (uint64_t i = 0; i < w.ranges; ++i) {
    uint64_t entry[2];
    std::memcpy(entry, table + i * proto::kWriteRangeEntryBytes, sizeof entry);
    Result<size_t> r =
        entry[1] == 0 ? Result<size_t>(size_t{0}) : b.Pwrite(fd, bytes + done, entry[1], entry[0]);
    if (!r.ok()) return done > 0 ? Result<size_t>(done) : r;
    done += *r;
    if (*r < entry[1]) break;
  }
  return done;
}

// Checks a kPwriteRanges table against the `data_len` bytes of the tail it starts: its entries
// within kMaxWriteRanges, every range within an off_t, and the lengths adding up to the bytes
// after the table. Sets w->offset (the first range's) and w->length.
bool CheckRanges(Work* w, const Buffer& data, uint64_t data_len) {
  const uint64_t n = w->ranges;
  if (n == 0 || n > proto::kMaxWriteRanges || data_len < n * proto::kWriteRangeEntryBytes) {
    return false;
  }
  const uint64_t bytes = data_len - n * proto::kWriteRangeEntryBytes;
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t entry[2];
    std::memcpy(entry, data.data() + i * proto::kWriteRangeEntryBytes, sizeof entry);
    if (entry[0] > static_cast<uint64_t>(INT64_MAX) - entry[1] || entry[1] > bytes - sum) {
      return false;
    }
    sum += entry[1];
    if (i == 0) w->offset = entry[0];
  }
  w->length = bytes;
  return sum == bytes;
}

// One request, one backend call (kPwriteRanges: one per range). kRead/kWrite hold the description's
// offset lock for the whole call, as the kernel does.
Result<size_t> RunOne(Core& core, Work* w) {
  backend::Backend& b = *core.backend;
  OpenFile& f = *w->file;
  switch (w->op) {
    case Op::kPread:
      return b.Pread(f.fd(), w->data.data(), w->length, w->offset);
    case Op::kPwrite:
      if (w->piped.valid()) return WritePiped(core, w);
      return b.Pwrite(f.fd(), w->data.data(), w->length, w->offset);
    case Op::kPwriteRanges:
      return WriteRanges(b, f.fd(), *w);
    case Op::kRead: {
      MutexLock lock(f.pos_mu);
      w->offset = f.pos.load();
      Result<size_t> r = b.Pread(f.fd(), w->data.data(), w->length, w->offset);
      if (r.ok()) f.pos.store(w->offset + *r);
      return r;
    }
    case Op::kWrite: {
      MutexLock lock(f.pos_mu);
      w->offset = f.pos.load();
      // With O_APPEND the backend fd appends whatever the offset (Linux pwrite semantics);
      // the shared offset then moves to the new end of file.
      Result<size_t> r = b.Pwrite(f.fd(), w->data.data(), w->length, w->offset);
      if (r.ok()) {
        uint64_t next = w->offset + *r;
        if (f.flags() & O_APPEND) {
          Result<struct stat> st = b.Fstat(f.fd());
          if (st.ok()) next = static_cast<uint64_t>(st->st_size);
        }
        f.pos.store(next);
      }
      return r;
    }
    default:
      return Status::InvalidArgument("not a data op");
  }
}

// The open-mode bits that change what a data call does; requests merge only within one.
constexpr int kMergeClassFlags = O_DIRECT | O_SYNC | O_DSYNC;

bool Positional(Op op) { return op == Op::kPread || op == Op::kPwrite; }

// What the dispatch core needs of a request. O_DIRECT alignment is checked by the daemon itself
// (offset and length against what the backend reports for the file, the buffer address against
// the same), so a misaligned request fails with EINVAL as locally even among aligned ones.
dispatch::RequestDesc Describe(const Work& w) {
  dispatch::RequestDesc d;
  const int flags = w.file->flags();
  d.offset = w.offset;
  d.length = w.length;
  d.positional = Positional(w.op);
  d.append = (flags & O_APPEND) != 0;
  d.merge_class = static_cast<uint32_t>(flags & kMergeClassFlags);
  d.direct_align = (flags & O_DIRECT) != 0 ? w.file->direct_align() : 0;
  d.buffer = reinterpret_cast<uintptr_t>(w.data.data());
  return d;
}

// Counts the dispatch for its file and for every application with a request in it.
void RecordDispatch(Core& core, const sched::Dispatch& d, Work* const* works, size_t n) {
  uint64_t bytes = 0;
  for (size_t i = 0; i < n; ++i) bytes += works[i]->length;
  core.stats->RecordFileDispatch(d.file.dev, d.file.ino, n, bytes);
  for (size_t i = 0; i < n; ++i) {
    AppStats* app = works[i]->session->stats();
    bool first = true;
    for (size_t j = 0; j < i && first; ++j) first = works[j]->session->stats() != app;
    if (!first) continue;
    uint64_t mine = 0;
    for (size_t j = i; j < n; ++j) mine += works[j]->session->stats() == app;
    Stats::RecordAppDispatch(app, mine);
  }
}

// The client is gone: its connection was closed (e.g. as a slow reader) or, for a write, the
// client hung up (seen on the socket before the event loop notices). Its queued request is
// cancelled: a read's reply would go nowhere, and a write must not land late (fencing): the
// client may have repeated it on another I/O node after this one stopped answering (failover),
// and writes that followed there must not be overwritten by this stale one. A revoked job's
// requests are cancelled likewise: none of its queued writes lands after the revocation.
bool IsWrite(const Work& w) {
  return w.op == Op::kPwrite || w.op == Op::kWrite || w.op == Op::kPwriteRanges;
}

bool ClientGone(const Work& w) {
  if (w.conn->closed() || w.session->job().revoked()) return true;
  if (!IsWrite(w)) return false;
  Connection* t = w.conn->transport();
  // (A shared-memory connection's socket is its side channel; its PollFd is the doorbell.)
  const SideChannel* side = t->capabilities().side;
  pollfd p{side != nullptr && side->AuxPollFd() >= 0 ? side->AuxPollFd() : t->PollFd(), POLLRDHUP,
           0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

// A positional read of this many bytes or more, alone in its dispatch, is read straight into
// its reply in the connection's shared-memory ring when there is room; an O_DIRECT one lands on
// a page boundary there (ClientConn::BeginInPlace pads the stream to it).
constexpr uint64_t kInPlaceReadMinBytes = kShmInPlaceMinBytes;

// Reads `w` into its reply in place; false when the connection cannot take it now.
bool ReadInPlace(Core& core, Work* w, int64_t start, int* result) {
  if (w->reply_op != Op::kPread || w->length < kInPlaceReadMinBytes) return false;
  // O_DIRECT: the file's alignment is an offset alignment (512 where the kernel does not say);
  // the memory is aligned to a page as well, as a pool buffer would be.
  const bool direct = (w->file->flags() & O_DIRECT) != 0;
  const size_t align = direct ? std::max<size_t>(w->file->direct_align(), kShmDataAlign) : 0;
  uint8_t* dst = w->conn->BeginInPlace(w->length, align);
  if (dst == nullptr) return false;
  Result<size_t> r = core.backend->Pread(w->file->fd(), dst, w->length, w->offset);
  Account(core, *w, r, TakeOutcome(w, start));  // (before the reply, which FinishInPlace sends)
  core.stats->conn.shm_reads_in_place.fetch_add(1, std::memory_order_relaxed);
  w->conn->FinishInPlace(w->op, w->client_id, r);
  *result = r.ok() ? 0 : r.status().code();
  Release(core, w);
  return true;
}

// How long a piped read waits for its connection's pipe lock before its data goes in the
// reply's tail instead: the holder only moves page references and queues a reply, unless the
// client holds its pipe's kernel lock (reading into memory whose faults it stalls).
constexpr auto kPipeLockWait = std::chrono::milliseconds(2);

// `mu` locked if it can be within `wait` (polled: std::timed_mutex's timed lock is a call that
// ThreadSanitizer does not see, and then reports its unlock).
std::unique_lock<std::mutex> LockWithin(std::mutex& mu, std::chrono::microseconds wait) {
  std::unique_lock<std::mutex> lock(mu, std::try_to_lock);
  const auto until = std::chrono::steady_clock::now() + wait;
  while (!lock.owns_lock() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    lock.try_lock();
  }
  return lock;
}

// How long a piped read's move into the client's pipe may wait for the pipe's mutex, which the
// client holds while it reads the pipe (PipeMover): a client that holds it longer is closed.
constexpr auto kPipeMoveWait = std::chrono::seconds(1);

// Moves `n` bytes of `own` into the client's pipe `to`: through the mover where there is one,
// waiting up to kPipeMoveWait; past that the connection is closed, and `own` goes with the move
// that is still waiting in the kernel.
Result<size_t> MoveToClient(Core& core, const ConnPtr& conn, PooledPipe& own, int to, size_t n) {
  PipeMover* mover = core.async_pipe_moves ? PipeMover::ForThisThread() : nullptr;
  if (mover == nullptr) return SpliceBetweenPipes(own.pipe().read_fd(), to, n);
  struct Held {  // the descriptors the move uses, open until it ends
    ConnPtr conn;
    PooledPipe pipe;
  };
  auto held = std::make_shared<Held>(Held{conn, std::move(own)});
  const int from = held->pipe.pipe().read_fd();
  Result<size_t> r = mover->SpliceWithin(from, to, n, kPipeMoveWait, held);
  if (r.ok() || r.status().code() != ETIMEDOUT) {
    own = std::move(held->pipe);
    return r;
  }
  fmt::print(stderr,
             "iorelayd: connection from {}: its read pipe stayed locked for {} ms; closing it\n",
             conn->transport()->peer(),
             std::chrono::duration_cast<std::chrono::milliseconds>(kPipeMoveWait).count());
  core.stats->conn.closed_pipe_stalled.fetch_add(1, std::memory_order_relaxed);
  conn->Shutdown();
  core.retired_movers.Add(PipeMover::TakeThisThreads());  // (its move still holds `held`)
  return r;
}

// A piped read (kPreadPiped). First, with no lock held, the file's bytes are spliced into a
// pipe of the pool (the page cache's pages, not copied) as far as it takes them, and the rest
// read into a buffer after them. Then, under the connection's pipe lock, as many as the
// client's pipe takes are moved into it (page references again) and the reply is queued, so
// that the pipe's bytes follow the order of the replies; what stayed behind joins the tail. No
// file I/O is done under the lock, and a lock held too long sends everything in the tail.
void ReadPiped(Core& core, Work* w, int64_t start, int* result) {
  PipedData* pipes = w->conn->transport()->capabilities().pipes;
  const int fd = w->file->fd();
  const uint64_t n = w->length;
  PooledPipe own;
  size_t in_own = 0;
  Status failed;
  if (pipes != nullptr && pipes->PipeToClient() >= 0 && !w->conn->closed()) {
    Result<PooledPipe> p = core.pipes.Get(&w->conn->pool_pipes);
    if (p.ok()) {
      Result<size_t> s = core.backend->ReadToPipe(fd, p->pipe().write_fd(), n, w->offset);
      if (s.ok()) {
        in_own = *s;
        own = std::move(*p);
      } else if (s.status().code() != ENOTSUP && s.status().code() != EINVAL) {
        failed = s.status();
      }
    }
  }
  size_t rest = 0;  // read into w->data at in_own (the pipe was full, or the end of file)
  if (failed.ok() && in_own < n) {
    w->data = core.buffers.Get(n);
    Result<size_t> r =
        w->data.data() == nullptr
            ? Result<size_t>(Status::FromErrno(ENOMEM, "read buffer"))
            : core.backend->Pread(fd, w->data.data() + in_own, n - in_own, w->offset + in_own);
    if (r.ok()) rest = *r;
    if (!r.ok() && in_own == 0) failed = r.status();  // else a short read, as after a local one
  }
  std::unique_lock<std::mutex> lock;
  size_t piped = 0;
  if (in_own > 0 && pipes != nullptr) {  // (in_own > 0: the connection has pipes)
    lock = LockWithin(*pipes->PipeLock(), kPipeLockWait);
    if (lock.owns_lock() && !w->conn->closed()) {
      Result<size_t> m = MoveToClient(core, w->conn, own, pipes->PipeToClient(), in_own);
      if (m.ok()) piped = *m;
    }
  }
  size_t tail = in_own - piped;  // left in our pipe: the tail's first bytes, then `rest`
  if (tail > 0) {
    if (w->data.data() == nullptr) w->data = core.buffers.Get(n);
    if (w->data.data() == nullptr ||
        !ReadFromPipe(own.pipe().read_fd(), w->data.data() + piped, tail).ok()) {
      tail = rest = 0;  // those bytes are lost: the reply is the piped prefix, a short read
    }
  }
  tail += rest;
  if (piped > 0 && tail > 0) std::memmove(w->data.data(), w->data.data() + piped, tail);
  Result<size_t> r = failed.ok() ? Result<size_t>(piped + tail) : Result<size_t>(failed);
  Account(core, *w, r, TakeOutcome(w, start));
  if (r.ok()) {
    uint64_t fields[1] = {piped};  // PipedReadReply, by hand like CountReply
    if (piped > 0) core.stats->conn.shm_reads_piped.fetch_add(1, std::memory_order_relaxed);
    w->conn->SendData(w->reply_op, w->client_id,
                      {reinterpret_cast<const uint8_t*>(fields), sizeof fields}, std::move(w->data),
                      tail);
  } else {
    w->conn->ReplyError(w->reply_op, w->client_id, r.status().code());
  }
  lock = {};
  own.Reset();
  *result = r.ok() ? 0 : r.status().code();
  Release(core, w);
}

void RunAlone(Core& core, Work* w, int* result) {
  int64_t start = core.clock.NowNs();
  const bool gone = ClientGone(*w);
  if (!gone && w->reply_op == Op::kPreadPiped) return ReadPiped(core, w, start, result);
  if (!gone && ReadInPlace(core, w, start, result)) return;
  if (gone && IsWrite(*w)) {
    core.stats->conn.fenced_writes.fetch_add(1, std::memory_order_relaxed);
    if (w->session->job().revoked()) w->session->job_ptr()->revoked_writes.fetch_add(1);
  }
  Result<size_t> r =
      gone ? Result<size_t>(Status::FromErrno(ECANCELED, "cancelled")) : RunOne(core, w);
  *result = r.ok() ? 0 : r.status().code();
  Answer(core, w, std::move(r), TakeOutcome(w, start));
}

// Contiguous requests of one file and open mode, possibly from different handles and
// sessions: ONE preadv/pwritev on the first request's backend fd (any of them would do: same
// file, same merge class); the dispatch core splits the result back (dispatch::SplitResult).
void RunMerged(Core& core, std::span<Work* const> works, int* const* results) {
  thread_local std::vector<struct iovec> iov;
  thread_local std::vector<uint64_t> lengths;
  thread_local std::vector<dispatch::Share> shares;
  iov.resize(works.size());
  lengths.resize(works.size());
  for (size_t i = 0; i < works.size(); ++i) {
    iov[i] = {works[i]->data.data(), works[i]->length};
    lengths[i] = works[i]->length;
  }
  int64_t start = core.clock.NowNs();
  int fd = works[0]->file->fd();
  uint64_t offset = works[0]->offset;
  const int count = static_cast<int>(works.size());
  Result<size_t> r = works[0]->op == Op::kPread
                         ? core.backend->Preadv(fd, iov.data(), count, offset)
                         : core.backend->Pwritev(fd, iov.data(), count, offset);
  dispatch::SplitResult(r, lengths, &shares);
  for (size_t i = 0; i < works.size(); ++i) {
    const dispatch::Share& share = shares[i];
    if (share.retry_alone) {
      RunAlone(core, works[i], results[i]);
    } else if (share.error != 0) {
      *results[i] = share.error;
      Answer(core, works[i], r.status(), TakeOutcome(works[i], start));
    } else {
      *results[i] = 0;
      Answer(core, works[i], share.bytes, TakeOutcome(works[i], start));
    }
  }
}

// Takes a piped write's `n` bytes out of the connection's pipe: into a pipe of the pool, or,
// when none can be had (all lent, descriptors exhausted), copied into a buffer that replaces
// `data` (the write's tail, `tail` bytes, copied after them). ENOMEM when there is no buffer
// either: the bytes are taken out and dropped, so the next piped write finds its own. EPROTO
// when the pipe holds fewer, or the connection has none: the client broke the protocol.
Status TakePiped(Core& core, ClientConn& conn, uint64_t n, PooledPipe* out, Buffer* data,
                 uint64_t tail) {
  const PipedData* pipes = conn.transport()->capabilities().pipes;
  const int from = pipes != nullptr ? pipes->PipeFromClient() : -1;
  if (from < 0) return Status::FromErrno(EPROTO, "a piped write on a connection without pipes");
  if (n > core.pipes.pipe_bytes()) return Status::FromErrno(EPROTO, "more than a pipe holds");
  Result<PooledPipe> p = MovePiped(core.pipes, &conn.pool_pipes, from, n);
  if (p.ok()) {
    *out = std::move(*p);
    return Status::Ok();
  }
  if (p.status().code() == EPROTO) return p.status();
  Buffer whole = core.buffers.Get(n + tail);
  if (whole.data() == nullptr) {
    IORELAY_RETURN_IF_ERROR(ReadFromPipe(from, nullptr, n));
    return Status::FromErrno(ENOMEM, "no memory for piped data");
  }
  IORELAY_RETURN_IF_ERROR(ReadFromPipe(from, whole.data(), n));
  core.stats->conn.shm_piped_copied.fetch_add(1, std::memory_order_relaxed);
  if (tail > 0) std::memcpy(whole.data() + n, data->data(), tail);
  core.buffers.Put(std::move(*data));
  *data = std::move(whole);
  return Status::Ok();
}

// The rest of SubmitDataOp, once the request's fields are decoded (and a piped write's bytes
// are out of the connection's pipe): checks, then admission into the scheduler.
void SubmitDecoded(Core& core, const ConnPtr& conn, Replier& refuse, std::unique_ptr<Work> w,
                   Buffer data, uint64_t data_len, int64_t arrival_ns, bool may_run_inline) {
  const Op op = w->reply_op == Op::kPreadPiped    ? Op::kPread
                : w->reply_op == Op::kPwritePiped ? Op::kPwrite
                                                  : w->reply_op;
  w->op = op;
  w->file = conn->session->Find(w->handle);
  if (w->file == nullptr) return refuse.Error(EBADF, w->handle);
  int acc = w->file->access_mode();
  if (IsRead(op) ? acc == O_WRONLY : acc == O_RDONLY) {
    return refuse.Error(EBADF, w->handle);
  }
  if (w->length > core.config.max_io_bytes) {  // (clients split larger calls)
    return refuse.Error(EINVAL, w->handle);
  }
  // A file offset is an off_t: past its range, pwrite and pread say EINVAL (and the contiguity
  // of two requests, offset + length, must not wrap).
  if (w->offset > static_cast<uint64_t>(INT64_MAX) - w->length) {
    return refuse.Error(EINVAL, w->handle);
  }
  if (IsRead(op) && w->reply_op != Op::kPreadPiped) {  // (a piped read gets one if it needs it)
    data = core.buffers.Get(w->length);
    if (data.data() == nullptr) return refuse.Error(ENOMEM, w->handle);
  } else if (data.leased() && (w->file->flags() & O_DIRECT) != 0 &&
             reinterpret_cast<uintptr_t>(data.data()) % std::max(w->file->direct_align(), 1u) !=
                 0) {
    // Data left in place in a shared-memory ring sits where the client's frame put it; when
    // that is not aligned as O_DIRECT wants (the client pads to kShmDataAlign), it is copied
    // into an aligned buffer, as from a socket.
    Buffer aligned = core.buffers.Get(data_len);
    if (aligned.data() == nullptr) return refuse.Error(ENOMEM, w->handle);
    if (data_len > 0) std::memcpy(aligned.data(), data.data(), data_len);
    data = std::move(aligned);
  } else if (data.leased()) {
    core.stats->conn.shm_writes_in_place.fetch_add(1, std::memory_order_relaxed);
  }
  w->data = std::move(data);
  conn->Charge(ChargeOf(w->length));  // released by Answer
  w->conn = conn;
  w->session = conn->session;
  sched::Request& r = w->request;
  r.app = w->session->app_index();
  r.client = w->session->id();
  r.file = w->file->key();
  r.op = IsRead(op) ? sched::IoOp::kRead : sched::IoOp::kWrite;
  bool shared_offset = op == Op::kRead || op == Op::kWrite;
  r.offset = shared_offset ? w->file->pos.load() : w->offset;
  // The offset of a kRead/kWrite (and of any O_APPEND write) is decided at the call.
  // Piped data is not in memory to be gathered with other requests'.
  // A kPwriteRanges request is a write of several places: alone, and ordered as an append is.
  r.mergeable = !shared_offset && (w->file->flags() & O_APPEND) == 0 && w->reply_op == op &&
                op != Op::kPwriteRanges;
  r.merge_class = static_cast<uint32_t>(w->file->flags() & (O_DIRECT | O_SYNC | O_DSYNC));
  r.length = w->length;
  r.arrival_ns = arrival_ns;
  core.dispatcher->Submit(std::move(w), may_run_inline);
}

// A piped write whose bytes leave the connection's pipe through the event loop's mover
// (PipeMover), so that the loop never waits while the client holds the pipe: the connection is
// not read until they are out (the next piped write's bytes follow them in the pipe), then the
// request goes on from the loop, when it reaps the move. Past the pool's bounds the bytes are read
// into a buffer; with no buffer either they are dropped and the request answered ENOMEM.
struct PipedTake {
  enum class Into { kPoolPipe, kBuffer, kNowhere };
  Core& core;
  ConnPtr conn;
  proto::FrameHeader h;
  std::unique_ptr<Work> w;
  Buffer data;  // the frame's tail, after the piped bytes
  uint64_t data_len;
  int64_t arrival_ns;
  bool may_run_inline;
  Into into = Into::kPoolPipe;
  PooledPipe pipe;
  Buffer whole;  // Into::kBuffer: the piped bytes, then the tail

  void Finish(Result<size_t> moved) {
    Replier refuse(core, conn, h, arrival_ns);
    const uint64_t n = w->piped_bytes;
    const size_t got = moved.ok() ? *moved : 0;
    if (!moved.ok() && moved.status().code() != EAGAIN) {
      refuse.Violation("taking its piped bytes: " + moved.status().ToString());
    } else if (got < n) {
      refuse.Violation(
          fmt::format("the client's pipe held {} of the {} bytes its request announced", got, n));
    } else if (into == Into::kNowhere) {
      refuse.Error(ENOMEM, w->handle);
    } else {
      if (into == Into::kPoolPipe) {
        w->piped = std::move(pipe);
      } else {
        core.stats->conn.shm_piped_copied.fetch_add(1, std::memory_order_relaxed);
        if (data_len > 0) std::memcpy(whole.data() + n, data.data(), data_len);
        core.buffers.Put(std::move(data));
        data = std::move(whole);
      }
      SubmitDecoded(core, conn, refuse, std::move(w), std::move(data), data_len, arrival_ns,
                    may_run_inline);
    }
  }
};

void TakePipedThenSubmit(PipeMover& mover, Core& core, const ConnPtr& conn,
                         const proto::FrameHeader& h, Replier& refuse, std::unique_ptr<Work> w,
                         Buffer data, uint64_t data_len, int64_t arrival_ns, bool may_run_inline) {
  const PipedData* pipes = conn->transport()->capabilities().pipes;
  const int from = pipes != nullptr ? pipes->PipeFromClient() : -1;
  if (from < 0) return refuse.Violation("a piped write on a connection without pipes");
  const uint64_t n = w->piped_bytes;
  if (n > core.pipes.pipe_bytes()) return refuse.Violation("more than a pipe holds");
  auto take = std::make_shared<PipedTake>(PipedTake{core, conn, h, std::move(w), std::move(data),
                                                    data_len, arrival_ns, may_run_inline});
  // Set before the move is submitted, cleared after its callback: the loop checks it before
  // reading the connection's next frame, and HandlerDone wakes it.
  conn->handler_busy.store(true, std::memory_order_release);
  auto done = [take](Result<size_t> moved) {
    take->Finish(std::move(moved));
    // Keep nothing of the request past this call, and give a pipe left after a refusal back
    // while the connection, which counts its pipes, lives (it may have been closed meanwhile).
    ConnPtr conn = std::move(take->conn);
    take->pipe.Reset();
    take->w.reset();
    conn->HandlerDone();
  };
  if (Result<PooledPipe> p = core.pipes.Get(&conn->pool_pipes); p.ok()) {
    take->pipe = std::move(*p);
    return mover.Splice(from, take->pipe.pipe().write_fd(), n, std::move(done));
  }
  take->whole = core.buffers.Get(n + data_len);
  if (take->whole.data() == nullptr) {
    take->into = PipedTake::Into::kNowhere;
    return mover.Discard(from, n, std::move(done));
  }
  take->into = PipedTake::Into::kBuffer;
  mover.Read(from, take->whole.data(), n, std::move(done));
}

}  // namespace

void SubmitDataOp(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
                  std::span<const uint8_t> fields, Buffer data, uint64_t data_len,
                  int64_t arrival_ns, bool may_run_inline) {
  Op op = static_cast<Op>(h.op);
  Replier refuse(core, conn, h, arrival_ns);  // for a request that never reaches the scheduler
  auto w = std::make_unique<Work>();
  w->reply_op = op;
  w->client_id = h.id;
  w->arrival_ns = arrival_ns;
  Status st;
  switch (op) {
    case Op::kPread:
    case Op::kPreadPiped:
    case Op::kPwritePiped: {
      proto::PreadRequest m;  // (PwritePipedRequest is the same)
      st = proto::DecodeFields(fields, &m);
      w->handle = m.handle;
      w->offset = m.offset;
      w->length = m.length;
      // A piped write's data leaves the connection's pipe now, whatever becomes of the request:
      // the next piped write's data follows it there.
      if (op == Op::kPwritePiped && st.ok()) {
        w->piped_bytes = m.length;
        w->length = m.length + data_len;
        if (PipeMover* mover = PipeMover::OfThisLoop(); mover != nullptr) {
          return TakePipedThenSubmit(*mover, core, conn, h, refuse, std::move(w), std::move(data),
                                     data_len, arrival_ns, may_run_inline);
        }
        st = TakePiped(core, *conn, m.length, &w->piped, &data, data_len);
        if (st.code() == ENOMEM) return refuse.Error(ENOMEM, w->handle);
        if (!st.ok()) return refuse.Violation(st.message());
      }
      break;
    }
    case Op::kRead: {
      proto::ReadRequest m;
      st = proto::DecodeFields(fields, &m);
      w->handle = m.handle;
      w->length = m.length;
      break;
    }
    case Op::kPwrite: {
      proto::PwriteRequest m;
      st = proto::DecodeFields(fields, &m);
      w->handle = m.handle;
      w->offset = m.offset;
      w->length = data_len;
      break;
    }
    case Op::kPwriteRanges: {
      proto::RangesRequest m;
      st = proto::DecodeFields(fields, &m);
      w->handle = m.handle;
      w->ranges = m.ranges;
      if (st.ok() && !CheckRanges(w.get(), data, data_len)) return refuse.Malformed();
      break;
    }
    default: {
      proto::WriteRequest m;
      st = proto::DecodeFields(fields, &m);
      w->handle = m.handle;
      w->length = data_len;
      break;
    }
  }
  if (!st.ok()) return refuse.Malformed();
  SubmitDecoded(core, conn, refuse, std::move(w), std::move(data), data_len, arrival_ns,
                may_run_inline);
}

uint64_t ReadReservation(const proto::FrameHeader& h, std::span<const uint8_t> fields,
                         uint64_t max_io_bytes) {
  uint64_t length = 0;
  const Op op = static_cast<Op>(h.op);
  if (op == Op::kPread || op == Op::kPreadPiped || op == Op::kPwritePiped) {
    proto::PreadRequest m;  // (PwritePipedRequest is the same: its length is the piped bytes)
    if (!proto::DecodeFields(fields, &m).ok()) return 0;
    length = m.length;
  } else if (op == Op::kRead) {
    proto::ReadRequest m;
    if (!proto::DecodeFields(fields, &m).ok()) return 0;
    length = m.length;
  } else {
    return 0;
  }
  return ChargeOf(std::min(length, max_io_bytes));  // (what SubmitDecoded charges)
}

void ExecuteDispatch(Core& core, const sched::Dispatch& d, Work* const* works, size_t n,
                     int* results) {
  RecordDispatch(core, d, works, n);
  const uint64_t dispatch_id = core.next_dispatch.fetch_add(1, std::memory_order_relaxed);
  thread_local std::vector<dispatch::RequestDesc> descs;
  thread_local dispatch::Plan plan;
  descs.resize(n);
  for (size_t i = 0; i < n; ++i) {
    works[i]->dispatch = dispatch_id;
    descs[i] = Describe(*works[i]);
  }
  dispatch::BuildPlan(descs, d.overlapping, &plan);
  thread_local std::vector<Work*> call;
  thread_local std::vector<int*> call_results;
  for (const dispatch::Step& step : plan.steps) {
    std::span<const size_t> idx = plan.Of(step);
    if (step.kind == dispatch::Step::Kind::kRefuse) {
      results[idx[0]] = step.error;
      Answer(core, works[idx[0]], Status::FromErrno(step.error, "O_DIRECT alignment"),
             TakeOutcome(works[idx[0]], core.clock.NowNs()));
    } else if (idx.size() == 1) {
      RunAlone(core, works[idx[0]], &results[idx[0]]);
    } else if (std::any_of(idx.begin(), idx.end(), [&](size_t i) {
                 return ClientGone(*works[i]) || works[i]->reply_op != works[i]->op;
               })) {
      for (size_t i : idx) RunAlone(core, works[i], &results[i]);  // the gone ones cancelled
    } else {
      call.clear();
      call_results.clear();
      for (size_t i : idx) {
        call.push_back(works[i]);
        call_results.push_back(&results[i]);
      }
      RunMerged(core, call, call_results.data());
    }
  }
}

}  // namespace iorelay::daemon
