// Runs one phase of the benchmark on one rank with plain POSIX calls (see phase.h).
#include "phase.h"

#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "common/pattern.h"
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

// Full-length pwrite/pread (short transfers are retried). Returns bytes done, or -1 (errno).
ssize_t Transfer(Op op, int fd, uint64_t* buf, size_t len, off_t offset) {
  size_t done = 0;
  auto* p = reinterpret_cast<char*>(buf);
  while (done < len) {
    ssize_t n = op == Op::kWrite ? pwrite(fd, p + done, len - done, offset + done)
                                 : pread(fd, p + done, len - done, offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;  // end of file on a read: the missing words count as wrong
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

class PhaseRunner {
 public:
  PhaseRunner(const Options& o, Op op, uint32_t rank, uint32_t ranks)
      : o_(o),
        op_(op),
        rank_(rank),
        ranks_(ranks),
        path_(FilePath(o, rank)),
        buffer_(o.request_bytes) {}

  RankResult Run(uint64_t max_requests) {
    MPI_Barrier(MPI_COMM_WORLD);
    start_ = Now();
    const bool timed = op_ != Op::kVerify && o_.stonewall_s > 0;
    int fd = Open();
    if (fd >= 0) Loop(fd, max_requests, timed);
    if (timed && o_.wearout) {
      uint64_t target = 0;
      MPI_Allreduce(&result_.requests, &target, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
      if (fd >= 0 && result_.errors == 0) Loop(fd, std::min(target, max_requests), false);
    }
    if (fd >= 0) Finish(fd);
    result_.time_s = Now() - start_;
    return result_;
  }

 private:
  void Fail(const char* call, int err) {
    ++result_.errors;
    if (result_.first_error.empty()) result_.first_error = ErrnoMessage(call, path_, err);
  }

  int Open() {
    int flags = op_ == Op::kWrite ? O_WRONLY | O_CREAT : O_RDONLY;
    if (o_.odirect) flags |= O_DIRECT;
    if (!buffer_.ok()) {
      Fail("posix_memalign for", ENOMEM);
      return -1;
    }
    int fd = open(path_.c_str(), flags | O_CLOEXEC, 0644);
    if (fd < 0) Fail("open", errno);
    return fd;
  }

  // Issues requests result_.requests .. limit-1; with `timed`, stops at the stonewall.
  void Loop(int fd, uint64_t limit, bool timed) {
    const size_t len = o_.request_bytes;
    const size_t words = len / 8;
    while (result_.requests < limit) {
      if (timed && Now() - start_ >= o_.stonewall_s) {
        result_.stonewalled = true;
        return;
      }
      const uint64_t offset = RequestOffset(o_, rank_, ranks_, result_.requests);
      if (op_ == Op::kWrite) FillPattern(buffer_.words(), words, o_.seed, rank_, offset);
      ssize_t n = Transfer(op_, fd, buffer_.words(), len, static_cast<off_t>(offset));
      if (n < 0) {
        Fail(op_ == Op::kWrite ? "pwrite" : "pread", errno);
        return;
      }
      if (op_ != Op::kWrite) {
        const size_t got = static_cast<size_t>(n) / 8;
        result_.wrong_words += words - got;
        result_.wrong_words += CountWrongWords(buffer_.words(), got, o_.seed, rank_, offset);
      } else if (static_cast<size_t>(n) != len) {
        Fail("pwrite", EIO);
        return;
      }
      result_.bytes += static_cast<uint64_t>(n);
      ++result_.requests;
    }
  }

  void Finish(int fd) {
    if (op_ == Op::kWrite && o_.fsync && fsync(fd) != 0) Fail("fsync", errno);
    if (close(fd) != 0) Fail("close", errno);
  }

  const Options& o_;
  const Op op_;
  const uint32_t rank_, ranks_;
  const std::string path_;
  Buffer buffer_;
  double start_ = 0;
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
