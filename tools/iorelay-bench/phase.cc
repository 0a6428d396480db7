// Runs one phase of the benchmark on one rank through its file backend (see phase.h).
#include "phase.h"

#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "common/pattern.h"
#include "file_backend.h"
#include "layout.h"

namespace iorelay::bench {
namespace {

constexpr size_t kAlignBytes = 4096;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string ErrnoMessage(const char* call, const std::string& path, int err) {
  return std::string(call) + " " + path + ": " + std::strerror(err);
}

// An aligned request buffer (O_DIRECT needs it), freed on scope exit.
class Buffer {
 public:
  explicit Buffer(size_t bytes) {
    if (posix_memalign(&data_, kAlignBytes, bytes) != 0) data_ = nullptr;
  }
  ~Buffer() { std::free(data_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  uint64_t* words() { return static_cast<uint64_t*>(data_); }
  bool ok() const { return data_ != nullptr; }

 private:
  void* data_ = nullptr;
};

std::unique_ptr<FileBackend> MakeBackend(const Options& o, Op op, const std::string& path) {
  return o.api == Api::kMpiio ? MakeMpiioBackend(o, op, path) : MakePosixBackend(o, op, path);
}

class PhaseRunner {
 public:
  PhaseRunner(const Options& o, Op op, uint32_t rank, uint32_t ranks)
      : o_(o),
        op_(op),
        rank_(rank),
        ranks_(ranks),
        path_(FilePath(o, rank)),
        file_(MakeBackend(o, op, path_)),
        per_call_(o.view == View::kNone     ? 1
                  : o.requests_per_call > 0 ? std::min(o.requests_per_call, o.segments)
                                            : o.segments),
        buffer_(o.request_bytes * per_call_) {}

  RankResult Run(uint64_t max_requests) {
    MPI_Barrier(MPI_COMM_WORLD);
    start_ = Now();
    const bool timed = op_ != Op::kVerify && o_.stonewall_s > 0;
    const bool open = Open();
    if (open) Loop(max_requests, timed);
    if (timed && o_.wearout) {
      uint64_t target = 0;
      MPI_Allreduce(&result_.requests, &target, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
      if (open && result_.errors == 0) Loop(std::min(target, max_requests), false);
    }
    if (open) Finish();
    result_.time_s = Now() - start_;
    return result_;
  }

 private:
  void Fail(const Status& status) {
    ++result_.errors;
    if (result_.first_error.empty()) result_.first_error = status.ToString();
  }

  bool Open() {
    if (!buffer_.ok()) {
      Fail(Status::FromErrno(ENOMEM, "posix_memalign for " + path_));
      return false;
    }
    Status opened = file_->Open();
    if (!opened.ok()) {
      Fail(opened);
      return false;
    }
    result_.reported_hints = file_->ReportedHints();
    return true;
  }

  // Issues requests issued_ .. limit-1, per_call_ in each call; with `timed`, stops at the
  // stonewall. A collective backend goes on after a failed call, so that the other ranks' calls
  // still match. Without a view a call is one request at its file offset; with one, it moves the
  // next requests at their offset in the view (request i at i * request bytes), each request's
  // words the pattern of its file offset.
  void Loop(uint64_t limit, bool timed) {
    const size_t words = o_.request_bytes / 8;
    while (issued_ < limit) {
      if (timed && Now() - start_ >= o_.stonewall_s) {
        result_.stonewalled = true;
        return;
      }
      const uint64_t first = issued_;
      const uint64_t count = std::min<uint64_t>(per_call_, limit - first);
      issued_ += count;
      const size_t len = count * o_.request_bytes;
      if (op_ == Op::kWrite) {
        for (uint64_t k = 0; k < count; ++k) {
          FillPattern(buffer_.words() + k * words, words, o_.seed, rank_,
                      RequestOffset(o_, rank_, ranks_, first + k));
        }
      }
      const uint64_t at = o_.view == View::kNone ? RequestOffset(o_, rank_, ranks_, first)
                                                 : first * o_.request_bytes;
      Result<uint64_t> n = file_->Transfer(buffer_.words(), len, at);
      if (n.ok() && op_ == Op::kWrite && *n != len) n = Status::IOError("short write " + path_);
      if (!n.ok()) {
        Fail(n.status());
        if (file_->collective()) continue;
        return;
      }
      if (op_ != Op::kWrite) {
        size_t got = static_cast<size_t>(*n) / 8;
        result_.wrong_words += count * words - got;
        for (uint64_t k = 0; k < count && got > 0; ++k) {
          const size_t here = std::min(got, words);
          result_.wrong_words += CountWrongWords(buffer_.words() + k * words, here, o_.seed, rank_,
                                                 RequestOffset(o_, rank_, ranks_, first + k));
          got -= here;
        }
      }
      result_.bytes += *n;
      result_.requests += count;
    }
  }

  void Finish() {
    if (op_ == Op::kWrite && o_.fsync) {
      Status synced = file_->Sync();
      if (!synced.ok()) Fail(synced);
    }
    Status closed = file_->Close();
    if (!closed.ok()) Fail(closed);
  }

  const Options& o_;
  const Op op_;
  const uint32_t rank_, ranks_;
  const std::string path_;
  std::unique_ptr<FileBackend> file_;
  const uint64_t per_call_;  // requests per call: 1, or with a view --requests-per-call
  Buffer buffer_;
  double start_ = 0;
  uint64_t issued_ = 0;  // requests issued, failed ones included
  RankResult result_;
};

}  // namespace

const char* OpName(Op op) {
  switch (op) {
    case Op::kWrite:
      return "write";
    case Op::kRead:
      return "read";
    case Op::kVerify:
      return "verify";
  }
  return "?";
}

RankResult RunPhase(const Options& o, Op op, uint32_t rank, uint32_t ranks, uint64_t max_requests) {
  return PhaseRunner(o, op, rank, ranks).Run(max_requests);
}

std::string PrepareFiles(const Options& o, uint32_t rank) {
  std::string error;
  if (o.layout == Layout::kFilePerProcess || rank == 0) {
    const std::string path = FilePath(o, rank);
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
      error = ErrnoMessage("open", path, errno);
    else if (close(fd) != 0)
      error = ErrnoMessage("close", path, errno);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return error;
}

std::string RemoveFiles(const Options& o, uint32_t rank) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (o.layout == Layout::kShared && rank != 0) return "";
  const std::string path = FilePath(o, rank);
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoMessage("unlink", path, errno);
  return "";
}

}  // namespace iorelay::bench
