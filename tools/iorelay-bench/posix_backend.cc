// The POSIX file backend of iorelay-bench: open, pwrite/pread, fsync, close on one descriptor
// (what the interposer forwards most directly).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "file_backend.h"

namespace iorelay::bench {
namespace {

class PosixBackend final : public FileBackend {
 public:
  PosixBackend(const Options& o, Op op, std::string path)
      : odirect_(o.odirect), op_(op), path_(std::move(path)) {}
  ~PosixBackend() override {
    if (fd_ >= 0) close(fd_);
  }

  Status Open() override {
    int flags = op_ == Op::kWrite ? O_WRONLY | O_CREAT : O_RDONLY;
    if (odirect_) flags |= O_DIRECT;
    fd_ = open(path_.c_str(), flags | O_CLOEXEC, 0644);
    return fd_ < 0 ? Status::LastError("open " + path_) : Status::Ok();
  }

  Result<uint64_t> Transfer(void* buf, uint64_t len, uint64_t offset) override {
    uint64_t done = 0;
    auto* p = static_cast<char*>(buf);
    while (done < len) {
      const off_t at = static_cast<off_t>(offset + done);
      ssize_t n = op_ == Op::kWrite ? pwrite(fd_, p + done, len - done, at)
                                    : pread(fd_, p + done, len - done, at);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::LastError((op_ == Op::kWrite ? "pwrite " : "pread ") + path_);
      if (n == 0) break;  // end of file on a read: the missing words count as wrong
      done += static_cast<uint64_t>(n);
    }
    return done;
  }

  Status Sync() override {
    return fsync(fd_) == 0 ? Status::Ok() : Status::LastError("fsync " + path_);
  }

  Status Close() override {
    const int fd = fd_;
    fd_ = -1;
    return close(fd) == 0 ? Status::Ok() : Status::LastError("close " + path_);
  }

  bool collective() const override { return false; }

 private:
  const bool odirect_;
  const Op op_;
  const std::string path_;
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<FileBackend> MakePosixBackend(const Options& o, Op op, const std::string& path) {
  return std::make_unique<PosixBackend>(o, op, path);
}

}  // namespace iorelay::bench
