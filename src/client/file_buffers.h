// The client-side buffers of one open file: write-behind (IORELAY_WRITE_BEHIND) coalesces a
// process's buffered writes and sends them later; read-ahead (IORELAY_READ_AHEAD) answers
// sequential small reads of a read-only file from one larger request. Their semantics are
// docs/interposer.md's "Write-behind and read-ahead".
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "client/config.h"
#include "client/write_ranges.h"
#include "common/mutex.h"

struct iorelay_file;

namespace iorelay::client {

enum class IoKind;

// Write-behind: the bytes one file may hold unsent, in at most kWriteBehindRanges disjoint
// ranges (a write that would pass either bound sends what is held first), and the writes it
// takes: smaller than kWriteBehindLargestWrite. Held ranges go out as one request: a pwrite
// when there is one, else a pwrite_ranges (proto::PwriteRangesRequest) whose table counts
// against the bytes.
inline constexpr size_t kWriteBehindBytes = size_t{1} << 20;
inline constexpr size_t kWriteBehindRanges = 512;  // (a sendmsg takes at most 1024 pieces)
inline constexpr size_t kWriteBehindLargestWrite = size_t{256} << 10;
// Write-behind: what is held is sent without waiting for its answer when it comes within
// kWriteBehindLargestWrite of kWriteBehindChunk (or of the daemon's request limit), or holds
// kWriteBehindRanges ranges, or a write does not fit beside it; the answer is taken when a
// request after it goes out or at the next flush, so the daemon writes one while the
// application fills the next; at most kWriteBehindInFlight per file.
inline constexpr size_t kWriteBehindChunk = size_t{1} << 20;
inline constexpr size_t kWriteBehindInFlight = 2;
// Write-behind: how long written bytes may stay unsent (the flusher thread's bound).
inline constexpr int64_t kWriteBehindDelayNs = 200'000'000;
// Read-ahead: the bytes one sequential read fetches (a daemon's usual request limit); a read
// of half of it or more bypasses the window.
inline constexpr size_t kReadAheadBytes = size_t{1} << 20;

struct InFlightWrite;  // ranges sent and not yet answered (file_buffers.cc)

struct FileBuffers {
  FileBuffers();
  ~FileBuffers();

  bool write_behind = false;  // the file takes write-behind (chosen at open)
  bool read_ahead = false;    // the file takes read-ahead (chosen at open)
  Mutex mu;                   // everything below; held while a flush or a fetch runs
  // Write-behind: the ranges written and not yet sent, the oldest since oldest_ns.
  WriteRanges pending GUARDED_BY(mu);
  int64_t oldest_ns GUARDED_BY(mu) = 0;
  // Requests sent before `pending`, oldest first, whose answers the client has not taken.
  std::deque<std::unique_ptr<InFlightWrite>> in_flight GUARDED_BY(mu);
  // A flush that failed: -errno, returned by every call on the file until fsync or close
  // reports it (then cleared).
  int error GUARDED_BY(mu) = 0;
  // Read-ahead: bytes [window_at, window_at + window.size()) as read at window_ns, while the
  // client's changes() was window_changes; window_eof when the read stopped at the end.
  std::vector<uint8_t> window GUARDED_BY(mu);
  int64_t window_at GUARDED_BY(mu) = 0;
  int64_t window_ns GUARDED_BY(mu) = 0;
  uint64_t window_changes GUARDED_BY(mu) = 0;
  bool window_eof GUARDED_BY(mu) = false;
  int64_t next_read_at GUARDED_BY(mu) =
      0;  // where the previous read ended: a read there is sequential
};

// Whether a regular file opened with `flags` takes write-behind (opened for writing, not
// O_DIRECT, O_SYNC, O_DSYNC nor O_APPEND) / read-ahead (opened read-only, not O_DIRECT).
bool TakesWriteBehind(const ClientConfig& cfg, int flags, uint32_t st_mode);
bool TakesReadAhead(const ClientConfig& cfg, int flags, uint32_t st_mode);

// A transfer on a file with buffers (f->buffers set). `total` is the bytes of iov, checked. Returns
// as the unbuffered transfer does: a count or -errno.
ssize_t BufferedTransfer(iorelay_file* f, IoKind kind, const struct iovec* iov, int count,
                         size_t total, off_t offset);

// Sends what the file holds unsent and waits for the daemon's answer. 0, or the -errno of
// this or an earlier failed flush (which stays until fsync or close reports it).
int FlushWrites(iorelay_file* f);
// As FlushWrites, and then the error is reported: fsync and close call this. Without `wait`,
// a file another thread is using is left alone (-EAGAIN).
int FlushAndTakeError(iorelay_file* f, bool wait = true);
// Drops the read-ahead window (a lock was taken, or this process changed the file).
void DropWindow(iorelay_file* f);
// The flusher's visit: sends what the file holds unsent since kWriteBehindDelayNs before
// `now_ns` (an error is kept for the file's next call). True while bytes are left unsent.
bool FlushIfStale(iorelay_file* f, int64_t now_ns);

}  // namespace iorelay::client
