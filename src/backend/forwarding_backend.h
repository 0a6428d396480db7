// A Backend that forwards every call to another (as leveldb's EnvWrapper): a wrapper
// overrides only the calls it changes (faults, delays, an emulated device).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace iorelay::backend {

class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  const char* name() const override { return inner_->name(); }

  Result<int> Open(int root_fd, const std::string& rel, int flags, mode_t mode) override {
    return inner_->Open(root_fd, rel, flags, mode);
  }
  Status Close(int fd) override { return inner_->Close(fd); }
  Result<size_t> Pread(int fd, void* buf, size_t n, uint64_t offset) override {
    return inner_->Pread(fd, buf, n, offset);
  }
  Result<size_t> Pwrite(int fd, const void* buf, size_t n, uint64_t offset) override {
    return inner_->Pwrite(fd, buf, n, offset);
  }
  Result<size_t> Preadv(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override {
    return inner_->Preadv(fd, iov, iovcnt, offset);
  }
  Result<size_t> Pwritev(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override {
    return inner_->Pwritev(fd, iov, iovcnt, offset);
  }
  Status Fsync(int fd, bool datasync) override { return inner_->Fsync(fd, datasync); }
  Status Ftruncate(int fd, int64_t length) override { return inner_->Ftruncate(fd, length); }
  Status Fallocate(int fd, int mode, int64_t offset, int64_t length) override {
    return inner_->Fallocate(fd, mode, offset, length);
  }
  Result<struct stat> Fstat(int fd) override { return inner_->Fstat(fd); }
  Result<struct statfs> Fstatfs(int fd) override { return inner_->Fstatfs(fd); }
  uint32_t DirectIoAlignment(int fd) override { return inner_->DirectIoAlignment(fd); }
  Result<int64_t> Seek(int fd, int64_t offset, int whence) override {
    return inner_->Seek(fd, offset, whence);
  }
  Status SetFlags(int fd, int flags) override { return inner_->SetFlags(fd, flags); }
  Result<std::vector<DirEntryInfo>> ReadDir(int fd) override { return inner_->ReadDir(fd); }
  Result<struct stat> Stat(int root_fd, const std::string& rel, bool nofollow) override {
    return inner_->Stat(root_fd, rel, nofollow);
  }
  Result<struct statfs> Statfs(int root_fd, const std::string& rel) override {
    return inner_->Statfs(root_fd, rel);
  }
  Status Access(int root_fd, const std::string& rel, int mode) override {
    return inner_->Access(root_fd, rel, mode);
  }
  Status Unlink(int root_fd, const std::string& rel) override {
    return inner_->Unlink(root_fd, rel);
  }
  Status Mkdir(int root_fd, const std::string& rel, mode_t mode) override {
    return inner_->Mkdir(root_fd, rel, mode);
  }
  Status Rmdir(int root_fd, const std::string& rel) override { return inner_->Rmdir(root_fd, rel); }
  Status Rename(int from_root_fd, const std::string& from, int to_root_fd, const std::string& to,
                unsigned flags) override {
    return inner_->Rename(from_root_fd, from, to_root_fd, to, flags);
  }
  Status Truncate(int root_fd, const std::string& rel, int64_t length) override {
    return inner_->Truncate(root_fd, rel, length);
  }
  Result<std::string> Readlink(int root_fd, const std::string& rel) override {
    return inner_->Readlink(root_fd, rel);
  }

 protected:
  Backend& inner() { return *inner_; }

 private:
  std::unique_ptr<Backend> inner_;
};

}  // namespace iorelay::backend
