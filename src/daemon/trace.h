// The request trace (--trace FILE): one line per answered request, complete enough to replay a
// run (the simulator's closed-loop replay) and to see which requests went out together.
// Format version 2, documented in docs/daemon.md ("Trace") and read by python/iorelay/trace.py.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "common/mutex.h"
#include "common/status.h"

namespace iorelay::daemon {

inline constexpr int kTraceFormatVersion = 2;

struct TraceRecord {
  int64_t arrival_ns = 0;     // monotonic clock of the daemon
  int64_t completion_ns = 0;  // when the reply was sent
  uint64_t session = 0;       // the client process's session on this daemon
  const char* app = "";       // its application (credential name)
  uint64_t dev = 0;           // file identity; 0 for requests on no open file
  uint64_t ino = 0;
  const char* op = "";
  uint64_t handle = 0;
  uint64_t offset = 0;  // data requests: where the bytes went (after the call, for read/write)
  uint64_t size = 0;    // bytes requested
  int open_flags =
      0;  // the file's status flags; the trace keeps O_DIRECT, O_SYNC/O_DSYNC, O_APPEND
  uint64_t dispatch = 0;  // the dispatch the request was served in; 0 outside the scheduler
  int64_t queue_ns = 0;   // arrival to the start of its backend call
  int64_t result = 0;     // bytes done or -errno
};

// Thread-safe; lines are buffered and flushed at Close().
class Trace {
 public:
  ~Trace();
  Status Open(const std::string& path);
  // Without the lock: Open runs before the event loops start, Close after they stop.
  bool enabled() const NO_THREAD_SAFETY_ANALYSIS { return file_ != nullptr; }
  void Write(const TraceRecord& r);
  void Close();

 private:
  Mutex mu_;
  FILE* file_ GUARDED_BY(mu_) = nullptr;
};

}  // namespace iorelay::daemon
