// A forwarding backend that sleeps before every call: tests use it to keep requests in
// flight (heartbeats, SIGKILL, shutdown) without a slow device.
#pragma once

#include <chrono>
#include <memory>
#include <thread>

#include "backend/backend.h"

namespace iorelay::backend {

class DelayBackend final : public Backend {
 public:
  DelayBackend(std::unique_ptr<Backend> inner, std::chrono::microseconds per_call)
      : inner_(std::move(inner)), delay_(per_call) {}
  const char* name() const override { return inner_->name(); }

  Result<int> Open(int root_fd, const std::string& rel, int flags, mode_t mode) override {
    Wait();
    return inner_->Open(root_fd, rel, flags, mode);
  }
  Status Close(int fd) override { return inner_->Close(fd); }  // no delay: shutdown paths
  Result<size_t> Pread(int fd, void* buf, size_t n, uint64_t offset) override {
    Wait();
    return inner_->Pread(fd, buf, n, offset);
  }
  Result<size_t> Pwrite(int fd, const void* buf, size_t n, uint64_t offset) override {
    Wait();
    return inner_->Pwrite(fd, buf, n, offset);
  }
  Result<size_t> Preadv(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override {
    Wait();
    return inner_->Preadv(fd, iov, iovcnt, offset);
  }
  Result<size_t> Pwritev(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override {
    Wait();
    return inner_->Pwritev(fd, iov, iovcnt, offset);
  }
  Status Fsync(int fd, bool datasync) override {
    Wait();
    return inner_->Fsync(fd, datasync);
  }
  Status Ftruncate(int fd, int64_t length) override {
    Wait();
    return inner_->Ftruncate(fd, length);
  }
  Status Fallocate(int fd, int mode, int64_t offset, int64_t length) override {
    Wait();
    return inner_->Fallocate(fd, mode, offset, length);
  }
  Result<struct stat> Fstat(int fd) override {
    Wait();
    return inner_->Fstat(fd);
  }
  Result<struct statfs> Fstatfs(int fd) override {
    Wait();
    return inner_->Fstatfs(fd);
  }
  uint32_t DirectIoAlignment(int fd) override { return inner_->DirectIoAlignment(fd); }
  Result<int64_t> Seek(int fd, int64_t offset, int whence) override {
    Wait();
    return inner_->Seek(fd, offset, whence);
  }
  Status SetFlags(int fd, int flags) override {
    Wait();
    return inner_->SetFlags(fd, flags);
  }
  Result<std::vector<DirEntryInfo>> ReadDir(int fd) override {
    Wait();
    return inner_->ReadDir(fd);
  }
  Result<struct stat> Stat(int root_fd, const std::string& rel, bool nofollow) override {
    Wait();
    return inner_->Stat(root_fd, rel, nofollow);
  }
  Result<struct statfs> Statfs(int root_fd, const std::string& rel) override {
    Wait();
    return inner_->Statfs(root_fd, rel);
  }
  Status Access(int root_fd, const std::string& rel, int mode) override {
    Wait();
    return inner_->Access(root_fd, rel, mode);
  }
  Status Unlink(int root_fd, const std::string& rel) override {
    Wait();
    return inner_->Unlink(root_fd, rel);
  }
  Status Mkdir(int root_fd, const std::string& rel, mode_t mode) override {
    Wait();
    return inner_->Mkdir(root_fd, rel, mode);
  }
  Status Rmdir(int root_fd, const std::string& rel) override {
    Wait();
    return inner_->Rmdir(root_fd, rel);
  }
  Status Rename(int from_root_fd, const std::string& from, int to_root_fd, const std::string& to,
                unsigned flags) override {
    Wait();
    return inner_->Rename(from_root_fd, from, to_root_fd, to, flags);
  }
  Status Truncate(int root_fd, const std::string& rel, int64_t length) override {
    Wait();
    return inner_->Truncate(root_fd, rel, length);
  }
  Result<std::string> Readlink(int root_fd, const std::string& rel) override {
    Wait();
    return inner_->Readlink(root_fd, rel);
  }

 private:
  void Wait() const {
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
  }
  std::unique_ptr<Backend> inner_;
  std::chrono::microseconds delay_;
};

}  // namespace iorelay::backend
