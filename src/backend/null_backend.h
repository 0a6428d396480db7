// A backend that does no I/O: writes succeed, reads return zeros, opens give dummy handles.
// It measures the protocol and the daemon alone (benchmarks), never a file system.
#pragma once

#include <atomic>

#include "backend/backend.h"

namespace iorelay::backend {

class NullBackend final : public Backend {
 public:
  const char* name() const override { return "null"; }
  bool HandlesAreDescriptors() const override { return false; }
  Result<int> Open(int root_fd, const std::string& rel, int flags, mode_t mode) override;
  Status Close(int) override { return Status::Ok(); }
  Result<size_t> Pread(int fd, void* buf, size_t n, uint64_t offset) override;
  Result<size_t> Pwrite(int, const void*, size_t n, uint64_t) override { return n; }
  Result<size_t> Preadv(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override;
  Result<size_t> Pwritev(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override;
  Status Fsync(int, bool) override { return Status::Ok(); }
  Status Ftruncate(int, int64_t) override { return Status::Ok(); }
  Status Fallocate(int, int, int64_t, int64_t) override { return Status::Ok(); }
  Result<struct stat> Fstat(int fd) override;
  Result<struct statfs> Fstatfs(int fd) override;
  Status Fchmod(int, mode_t) override { return Status::Ok(); }
  Status Futimens(int, const struct timespec*) override { return Status::Ok(); }
  Result<int64_t> Seek(int, int64_t offset, int) override { return offset; }
  Status SetFlags(int, int) override { return Status::Ok(); }
  Result<DirPage> ReadDir(int fd, uint64_t cookie, size_t max_entries) override;

  Result<struct stat> Stat(int root_fd, const std::string& rel, bool nofollow) override;
  Result<struct statfs> Statfs(int root_fd, const std::string& rel) override;
  Status Access(int, const std::string&, int) override { return Status::Ok(); }
  Status Unlink(int, const std::string&) override { return Status::Ok(); }
  Status Mkdir(int, const std::string&, mode_t) override { return Status::Ok(); }
  Status Rmdir(int, const std::string&) override { return Status::Ok(); }
  Status Rename(int, const std::string&, int, const std::string&, unsigned) override {
    return Status::Ok();
  }
  Status Truncate(int, const std::string&, int64_t) override { return Status::Ok(); }
  Status Chmod(int, const std::string&, mode_t) override { return Status::Ok(); }
  Status Utimens(int, const std::string&, const struct timespec*, bool) override {
    return Status::Ok();
  }
  Status Symlink(const std::string&, int, const std::string&) override { return Status::Ok(); }
  Status Link(int, const std::string&, int, const std::string&, bool) override {
    return Status::Ok();
  }
  Result<std::string> Readlink(int, const std::string&) override {
    return Status::InvalidArgument("null backend has no symlinks");
  }

 private:
  std::atomic<int> next_fd_{1 << 20};  // dummy handles, far from real descriptors
};

}  // namespace iorelay::backend
