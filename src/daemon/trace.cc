// Trace file writing: a version line, a header row, then tab-separated rows (see trace.h).
#include "daemon/trace.h"

#include <fcntl.h>

#include <cinttypes>

namespace iorelay::daemon {
namespace {

// The open flags that decide merging, as letters: D (O_DIRECT), S (O_SYNC or O_DSYNC), A
// (O_APPEND); "-" for none.
void FlagLetters(int flags, char out[4]) {
  int n = 0;
  if (flags & O_DIRECT) out[n++] = 'D';
  if (flags & (O_SYNC | O_DSYNC)) out[n++] = 'S';
  if (flags & O_APPEND) out[n++] = 'A';
  if (n == 0) out[n++] = '-';
  out[n] = '\0';
}

}  // namespace

Trace::~Trace() { Close(); }

Status Trace::Open(const std::string& path) {
  MutexLock lock(mu_);
  file_ = std::fopen(path.c_str(), "we");
  if (file_ == nullptr) return Status::LastError("trace file " + path);
  std::fprintf(file_, "# iorelay-trace %d\n", kTraceFormatVersion);
  std::fputs(
      "arrival_ns\tcompletion_ns\tsession\tapp\tdev\tino\top\thandle\toffset\tsize\tflags\t"
      "dispatch\tqueue_ns\tresult\n",
      file_);
  return Status::Ok();
}

void Trace::Write(const TraceRecord& r) {
  char flags[4];
  FlagLetters(r.open_flags, flags);
  MutexLock lock(mu_);
  if (file_ == nullptr) return;
  std::fprintf(file_,
               "%" PRId64 "\t%" PRId64 "\t%" PRIu64 "\t%s\t%" PRIu64 "\t%" PRIu64 "\t%s\t%" PRIu64
               "\t%" PRIu64 "\t%" PRIu64 "\t%s\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\n",
               r.arrival_ns, r.completion_ns, r.session, r.app, r.dev, r.ino, r.op, r.handle,
               r.offset, r.size, flags, r.dispatch, r.queue_ns, r.result);
}

void Trace::Close() {
  MutexLock lock(mu_);
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

}  // namespace iorelay::daemon
