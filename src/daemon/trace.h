// The request trace (--trace FILE): one line per request, for offline analysis.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "common/status.h"

namespace iorelay::daemon {

struct TraceRecord {
  int64_t time_ns = 0;  // arrival, monotonic
  const char* app = "";
  const char* op = "";
  uint64_t handle = 0;
  uint64_t offset = 0;
  uint64_t size = 0;  // bytes requested
  int64_t latency_ns = 0;
  int64_t result = 0;  // bytes done or -errno
};

// Thread-safe; lines are buffered and flushed at Close().
class Trace {
 public:
  ~Trace();
  Status Open(const std::string& path);
  bool enabled() const { return file_ != nullptr; }
  void Write(const TraceRecord& r);
  void Close();

 private:
  std::mutex mu_;
  FILE* file_ = nullptr;
};

}  // namespace iorelay::daemon
