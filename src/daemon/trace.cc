// Trace file writing: a header line, then space-separated columns.
#include "daemon/trace.h"

#include <cinttypes>

namespace iorelay::daemon {

Trace::~Trace() { Close(); }

Status Trace::Open(const std::string& path) {
  file_ = std::fopen(path.c_str(), "we");
  if (file_ == nullptr) return Status::LastError("trace file " + path);
  std::fputs("# time_ns app op handle offset size latency_ns result\n", file_);
  return Status::Ok();
}

void Trace::Write(const TraceRecord& r) {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_ == nullptr) return;
  std::fprintf(file_,
               "%" PRId64 " %s %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 "\n",
               r.time_ns, r.app, r.op, r.handle, r.offset, r.size, r.latency_ns, r.result);
}

void Trace::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

}  // namespace iorelay::daemon
