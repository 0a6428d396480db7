// Write-behind and read-ahead of one open file (file_buffers.h): what a call takes from or
// leaves in the file's buffers, and the flush that sends unsent writes.
#include "client/file_buffers.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "client/client.h"
#include "client/direct.h"
#include "client/file_ops.h"
#include "client/server.h"

namespace iorelay::client {

// Ranges sent as one request on a connection of their own (the pool's), its answer not yet
// taken; [lo, hi) is where they lie.
struct InFlightWrite {
  std::vector<WriteRanges::Range> ranges;
  int64_t lo = 0, hi = 0;
  std::vector<uint8_t> fields;
  std::vector<uint64_t> table;  // kPwriteRanges: (offset, length) of each range
  std::vector<struct iovec> iov;
  std::vector<uint8_t> payload;
  Exchange exchange;
  std::optional<Lease> lease;
  uint64_t id = 0;
};

static_assert(WriteRanges::kEntryBytes == proto::kWriteRangeEntryBytes);
static_assert(kWriteBehindRanges <= proto::kMaxWriteRanges);

FileBuffers::FileBuffers() = default;
FileBuffers::~FileBuffers() = default;

namespace {

// Flags under which a write must reach the daemon before the call returns.
constexpr int kWriteThroughFlags = O_DIRECT | O_SYNC | O_DSYNC | O_APPEND;

void CopyOut(const uint8_t* from, size_t n, const struct iovec* iov, int count) {
  for (int i = 0; i < count && n > 0; ++i) {
    const size_t k = std::min(n, iov[i].iov_len);
    if (k == 0) continue;
    std::memcpy(iov[i].iov_base, from, k);
    from += k;
    n -= k;
  }
}

// Under b.mu: writes `ranges`, less their first `skip` bytes, one positional write each, and
// waits for the daemon's answers (a daemon that does not answer is replaced as for any
// positional write: failover repeats the request on the survivor). A failure is kept in
// b.error, and the bytes after it are dropped.
void SendNow(iorelay_file* f, FileBuffers& b, const std::vector<WriteRanges::Range>& ranges,
             size_t skip) REQUIRES(b.mu) {
  for (const WriteRanges::Range& r : ranges) {
    size_t from = std::min(skip, r.data.size());
    skip -= from;
    while (from < r.data.size() && b.error == 0) {
      struct iovec v {
        const_cast<uint8_t*>(r.data.data()) + from, r.data.size() - from
      };
      const ssize_t n = SendTransfer(f, IoKind::kPwrite, &v, 1,
                                     static_cast<off_t>(r.at + static_cast<int64_t>(from)));
      if (n < 0) {
        b.error = static_cast<int>(n);
      } else if (n == 0) {
        b.error = -ENOSPC;  // no progress: as a local write that cannot place a byte
      } else {
        from += static_cast<size_t>(n);
      }
    }
    if (b.error != 0) return;
  }
}

// Under b.mu: the buffers of ranges that went out, kept for the next range to fill.
void Recycle(FileBuffers& b, std::vector<WriteRanges::Range>& ranges) REQUIRES(b.mu) {
  for (WriteRanges::Range& r : ranges) b.pending.Recycle(std::move(r.data));
  ranges.clear();
}

// Under b.mu: takes the answer of the oldest request in flight. One the daemon did not answer
// is sent again (to the survivor, with failover), as synchronous writes would have been; a
// short count (the daemon writes the ranges in order and stops at a failure) sends the rest.
void TakeOldest(iorelay_file* f, FileBuffers& b) REQUIRES(b.mu) {
  std::unique_ptr<InFlightWrite> w = std::move(b.in_flight.front());
  b.in_flight.pop_front();
  const Status s = (**w->lease).Finish(w->exchange, w->id);
  w->lease.reset();  // the connection goes back (a broken one is dropped by the pool)
  size_t bytes = 0;
  for (const WriteRanges::Range& r : w->ranges) bytes += r.data.size();
  if (!s.ok()) {
    SendNow(f, b, w->ranges, 0);
  } else if (w->exchange.reply.status != 0) {
    if (b.error == 0) b.error = -static_cast<int>(w->exchange.reply.status);
  } else if (proto::CountReply count;
             !proto::DecodeFields(w->payload, &count).ok() || count.count > bytes) {
    if (b.error == 0) b.error = -EIO;
  } else {
    SendNow(f, b, w->ranges, count.count);
  }
  Recycle(b, w->ranges);
}

// Under b.mu: sends what is held as one request without waiting for the answer, after taking
// the answers of the requests in flight it overlaps (the daemon may run two requests in either
// order) and of the oldest when kWriteBehindInFlight are out. Where no connection is free,
// synchronously, one pwrite per range.
void SendBehind(iorelay_file* f, FileBuffers& b) REQUIRES(b.mu) {
  if (b.pending.empty()) return;
  const int64_t lo = b.pending.first(), hi = b.pending.last_end();
  const size_t wire = b.pending.WireBytes();
  // Answers that came are taken without waiting: their connections and buffers go back.
  while (!b.in_flight.empty()) {
    Result<bool> came = (**b.in_flight.front()->lease).ReplyArrived();
    if (came.ok() && !*came) break;
    TakeOldest(f, b);
  }
  for (;;) {
    bool overlaps = false;
    for (const auto& w : b.in_flight) overlaps = overlaps || (w->lo < hi && lo < w->hi);
    if (!overlaps && b.in_flight.size() < kWriteBehindInFlight) break;
    TakeOldest(f, b);
  }
  auto w = std::make_unique<InFlightWrite>();
  w->ranges = b.pending.Take();
  w->lo = lo;
  w->hi = hi;
  Server& server = f->client->server(f->server);
  std::optional<Result<Lease>> acquired(server.TryAcquire());
  if (!acquired->ok() && !b.in_flight.empty()) {  // this file's own requests hold them all
    while (!b.in_flight.empty()) TakeOldest(f, b);
    acquired.emplace(server.TryAcquire());
  }
  Result<Lease>& lease = *acquired;
  if (b.error != 0 || f->direct_fd.load() >= 0 || !lease.ok() ||
      (*lease)->session().generation != f->generation.load() || wire > f->max_io_bytes.load()) {
    SendNow(f, b, w->ranges, 0);
    Recycle(b, w->ranges);
    return;
  }
  if (w->ranges.size() == 1) {
    WriteRanges::Range& r = w->ranges[0];
    w->fields = proto::EncodeFields(proto::PwriteRequest{f->handle, static_cast<uint64_t>(r.at)});
    w->iov = {{r.data.data(), r.data.size()}};
    w->exchange =
        Exchange{proto::Op::kPwrite, w->fields, IoSpan{w->iov.data(), 1}, IoSpan{}, &w->payload};
  } else {
    w->table.reserve(2 * w->ranges.size());
    w->iov.reserve(1 + w->ranges.size());
    w->iov.push_back({});  // the table, once complete
    for (WriteRanges::Range& r : w->ranges) {
      w->table.push_back(static_cast<uint64_t>(r.at));
      w->table.push_back(r.data.size());
      w->iov.push_back({r.data.data(), r.data.size()});
    }
    w->iov[0] = {w->table.data(), w->table.size() * sizeof(uint64_t)};
    w->fields = proto::EncodeFields(proto::RangesRequest{f->handle, w->ranges.size()});
    w->exchange =
        Exchange{proto::Op::kPwriteRanges, w->fields,
                 IoSpan{w->iov.data(), static_cast<int>(w->iov.size())}, IoSpan{}, &w->payload};
  }
  Result<uint64_t> id = (*lease)->Start(w->exchange);
  if (!id.ok()) {  // nothing was sent: synchronously, which fails over or reports
    SendNow(f, b, w->ranges, 0);
    Recycle(b, w->ranges);
    return;
  }
  w->id = *id;
  w->lease.emplace(std::move(*lease));
  b.in_flight.push_back(std::move(w));
}

// Under b.mu: sends what is held, then takes every answer in flight. A failure is kept in
// b.error; the bytes are dropped either way.
int FlushLocked(iorelay_file* f, FileBuffers& b) REQUIRES(b.mu) {
  SendBehind(f, b);
  while (!b.in_flight.empty()) TakeOldest(f, b);
  return b.error;
}

ssize_t BufferWrite(iorelay_file* f, FileBuffers& b, const struct iovec* iov, int count,
                    size_t total, off_t offset) REQUIRES(b.mu) {
  if (total >= kWriteBehindLargestWrite) {  // large: sent now, after what came before
    if (int rc = FlushLocked(f, b); rc < 0) return rc;
    return SendTransfer(f, IoKind::kPwrite, iov, count, offset);
  }
  const size_t limit = std::min<size_t>(kWriteBehindBytes, f->max_io_bytes.load());
  // A write that might not fit beside what is held (as a range of its own) sends that first.
  if (!b.pending.empty() && !b.pending.Fits(total, limit, kWriteBehindRanges)) {
    SendBehind(f, b);
    if (b.error != 0) return b.error;
  }
  const int64_t now = MonotonicNs();
  if (b.pending.empty()) b.oldest_ns = now;
  b.pending.Add(offset, iov, count, total);
  f->client->NoteBuffered();
  if (now - b.oldest_ns >= kWriteBehindDelayNs) {
    (void)FlushLocked(f, b);  // a failure shows at the next call, fsync or close
  } else if (b.pending.WireBytes() + kWriteBehindLargestWrite >=
                 std::min<size_t>(kWriteBehindChunk, f->max_io_bytes.load()) ||
             b.pending.count() >= kWriteBehindRanges) {
    SendBehind(f, b);  // (one request: within the daemon's limit)
  }
  return static_cast<ssize_t>(total);
}

ssize_t ReadAhead(iorelay_file* f, FileBuffers& b, const struct iovec* iov, int count, size_t total,
                  off_t offset) REQUIRES(b.mu) {
  const int64_t now = MonotonicNs();
  const int64_t at = offset;
  const auto have = static_cast<int64_t>(b.window.size());
  const bool valid = (have > 0 || b.window_eof) &&
                     now - b.window_ns < f->client->listed_attrs().valid_ns() &&
                     f->client->changes() == b.window_changes;
  if (valid && at >= b.window_at && at <= b.window_at + have) {
    const auto avail = static_cast<size_t>(b.window_at + have - at);
    if (avail >= total || b.window_eof) {
      const size_t n = std::min(avail, total);
      CopyOut(b.window.data() + (at - b.window_at), n, iov, count);
      b.next_read_at = at + static_cast<int64_t>(n);
      return static_cast<ssize_t>(n);
    }
  }
  if (total >= kReadAheadBytes / 2 || at != b.next_read_at) {  // large or not sequential
    const ssize_t n = SendTransfer(f, IoKind::kPread, iov, count, offset);
    if (n >= 0) b.next_read_at = at + n;
    return n;
  }
  const uint64_t changes = f->client->changes();  // before the read: a change during it counts
  b.window.resize(kReadAheadBytes);
  struct iovec v {
    b.window.data(), b.window.size()
  };
  const ssize_t got = SendTransfer(f, IoKind::kPread, &v, 1, offset);
  if (got < 0) {
    b.window.clear();
    b.window_eof = false;
    return got;
  }
  b.window.resize(static_cast<size_t>(got));
  b.window_at = at;
  b.window_ns = now;
  b.window_changes = changes;
  b.window_eof = static_cast<size_t>(got) < kReadAheadBytes;
  const size_t n = std::min(static_cast<size_t>(got), total);
  CopyOut(b.window.data(), n, iov, count);
  b.next_read_at = at + static_cast<int64_t>(n);
  return static_cast<ssize_t>(n);
}

}  // namespace

bool TakesWriteBehind(const ClientConfig& cfg, int flags, uint32_t st_mode) {
  return cfg.write_behind && S_ISREG(st_mode) && (flags & O_ACCMODE) != O_RDONLY &&
         (flags & kWriteThroughFlags) == 0;
}

bool TakesReadAhead(const ClientConfig& cfg, int flags, uint32_t st_mode) {
  return cfg.read_ahead && S_ISREG(st_mode) && (flags & O_ACCMODE) == O_RDONLY &&
         (flags & O_DIRECT) == 0;
}

ssize_t BufferedTransfer(iorelay_file* f, IoKind kind, const struct iovec* iov, int count,
                         size_t total, off_t offset) {
  FileBuffers& b = *f->buffers;
  MutexLock l(b.mu);
  if (b.error != 0) return b.error;
  if (kind == IoKind::kPwrite && b.write_behind &&
      (f->status_flags.load() & kWriteThroughFlags) == 0) {
    return BufferWrite(f, b, iov, count, total, offset);
  }
  if (kind == IoKind::kPread && b.read_ahead && (f->status_flags.load() & O_DIRECT) == 0) {
    return ReadAhead(f, b, iov, count, total, offset);
  }
  // Anything else is carried out after what is unsent: reads see this process's writes.
  if (int rc = FlushLocked(f, b); rc < 0) return rc;
  return SendTransfer(f, kind, iov, count, offset);
}

int FlushWrites(iorelay_file* f) {
  if (!f || !f->buffers || !f->buffers->write_behind) return 0;
  FileBuffers& b = *f->buffers;
  MutexLock l(b.mu);
  return FlushLocked(f, b);
}

int FlushAndTakeError(iorelay_file* f, bool wait) {
  if (!f || !f->buffers || !f->buffers->write_behind) return 0;
  FileBuffers& b = *f->buffers;
  if (wait) {
    b.mu.Lock();
  } else if (!b.mu.TryLock()) {
    return -EAGAIN;
  }
  const int rc = FlushLocked(f, b);
  b.error = 0;
  b.mu.Unlock();
  return rc;
}

void DropWindow(iorelay_file* f) {
  if (!f || !f->buffers || !f->buffers->read_ahead) return;
  MutexLock l(f->buffers->mu);
  f->buffers->window.clear();
  f->buffers->window_eof = false;
}

bool FlushIfStale(iorelay_file* f, int64_t now_ns) {
  if (!f->buffers || !f->buffers->write_behind) return false;
  FileBuffers& b = *f->buffers;
  if (!b.mu.TryLock()) return true;  // a call is using the file: the flusher looks again later
  bool left = !b.pending.empty() || !b.in_flight.empty();
  if (left && (b.pending.empty() || now_ns - b.oldest_ns >= kWriteBehindDelayNs)) {
    (void)FlushLocked(f, b);
    left = false;
  }
  b.mu.Unlock();
  return left;
}

}  // namespace iorelay::client
