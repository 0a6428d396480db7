// A Backend that forwards every call to another (as leveldb's EnvWrapper): a wrapper
// overrides only the calls it changes (faults, an emulated device), or BeforeCall to act on
// every call (delays).
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
  bool HandlesAreDescriptors() const override { return inner_->HandlesAreDescriptors(); }

  Result<int> Open(int root_fd, const std::string& rel, int flags, mode_t mode) override {
    BeforeCall("open");
    return inner_->Open(root_fd, rel, flags, mode);
  }
  Status Close(int fd) override {
    BeforeCall("close");
    return inner_->Close(fd);
  }
  Result<size_t> Pread(int fd, void* buf, size_t n, uint64_t offset) override {
    BeforeCall("pread");
    return inner_->Pread(fd, buf, n, offset);
  }
  Result<size_t> Pwrite(int fd, const void* buf, size_t n, uint64_t offset) override {
    BeforeCall("pwrite");
    return inner_->Pwrite(fd, buf, n, offset);
  }
  Result<size_t> Preadv(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override {
    BeforeCall("preadv");
    return inner_->Preadv(fd, iov, iovcnt, offset);
  }
  Result<size_t> Pwritev(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override {
    BeforeCall("pwritev");
    return inner_->Pwritev(fd, iov, iovcnt, offset);
  }
  Result<size_t> WriteFromPipe(int fd, int pipe_fd, size_t n, uint64_t offset) override {
    BeforeCall("splice_write");
    return inner_->WriteFromPipe(fd, pipe_fd, n, offset);
  }
  Result<size_t> ReadToPipe(int fd, int pipe_fd, size_t n, uint64_t offset) override {
    BeforeCall("splice_read");
    return inner_->ReadToPipe(fd, pipe_fd, n, offset);
  }
  Status Fsync(int fd, bool datasync) override {
    BeforeCall("fsync");
    return inner_->Fsync(fd, datasync);
  }
  Status Ftruncate(int fd, int64_t length) override {
    BeforeCall("ftruncate");
    return inner_->Ftruncate(fd, length);
  }
  Status Fallocate(int fd, int mode, int64_t offset, int64_t length) override {
    BeforeCall("fallocate");
    return inner_->Fallocate(fd, mode, offset, length);
  }
  Result<struct stat> Fstat(int fd) override {
    BeforeCall("fstat");
    return inner_->Fstat(fd);
  }
  Status Fchmod(int fd, mode_t mode) override {
    BeforeCall("fchmod");
    return inner_->Fchmod(fd, mode);
  }
  Status Futimens(int fd, const struct timespec times[2]) override {
    BeforeCall("futimens");
    return inner_->Futimens(fd, times);
  }
  Result<struct statfs> Fstatfs(int fd) override {
    BeforeCall("fstatfs");
    return inner_->Fstatfs(fd);
  }
  uint32_t DirectIoAlignment(int fd) override {
    BeforeCall("direct_io_alignment");
    return inner_->DirectIoAlignment(fd);
  }
  Result<int64_t> Seek(int fd, int64_t offset, int whence) override {
    BeforeCall("seek");
    return inner_->Seek(fd, offset, whence);
  }
  Status SetFlags(int fd, int flags) override {
    BeforeCall("set_flags");
    return inner_->SetFlags(fd, flags);
  }
  Result<DirPage> ReadDir(int fd, uint64_t cookie, size_t max_entries) override {
    BeforeCall("read_dir");
    return inner_->ReadDir(fd, cookie, max_entries);
  }
  Result<struct stat> StatEntry(int dir_fd, const std::string& name) override {
    BeforeCall("stat_entry");
    return inner_->StatEntry(dir_fd, name);
  }
  Result<struct stat> Stat(int root_fd, const std::string& rel, bool nofollow) override {
    BeforeCall("stat");
    return inner_->Stat(root_fd, rel, nofollow);
  }
  Result<struct statfs> Statfs(int root_fd, const std::string& rel) override {
    BeforeCall("statfs");
    return inner_->Statfs(root_fd, rel);
  }
  Status Access(int root_fd, const std::string& rel, int mode) override {
    BeforeCall("access");
    return inner_->Access(root_fd, rel, mode);
  }
  Status Unlink(int root_fd, const std::string& rel) override {
    BeforeCall("unlink");
    return inner_->Unlink(root_fd, rel);
  }
  Status Mkdir(int root_fd, const std::string& rel, mode_t mode) override {
    BeforeCall("mkdir");
    return inner_->Mkdir(root_fd, rel, mode);
  }
  Status Rmdir(int root_fd, const std::string& rel) override {
    BeforeCall("rmdir");
    return inner_->Rmdir(root_fd, rel);
  }
  Status Rename(int from_root_fd, const std::string& from, int to_root_fd, const std::string& to,
                unsigned flags) override {
    BeforeCall("rename");
    return inner_->Rename(from_root_fd, from, to_root_fd, to, flags);
  }
  Status Truncate(int root_fd, const std::string& rel, int64_t length) override {
    BeforeCall("truncate");
    return inner_->Truncate(root_fd, rel, length);
  }
  Status Chmod(int root_fd, const std::string& rel, mode_t mode) override {
    BeforeCall("chmod");
    return inner_->Chmod(root_fd, rel, mode);
  }
  Status Utimens(int root_fd, const std::string& rel, const struct timespec times[2],
                 bool nofollow) override {
    BeforeCall("utimens");
    return inner_->Utimens(root_fd, rel, times, nofollow);
  }
  Status Symlink(const std::string& target, int root_fd, const std::string& rel) override {
    BeforeCall("symlink");
    return inner_->Symlink(target, root_fd, rel);
  }
  Status Link(int from_root_fd, const std::string& from, int to_root_fd, const std::string& to,
              bool follow) override {
    BeforeCall("link");
    return inner_->Link(from_root_fd, from, to_root_fd, to, follow);
  }
  Result<std::string> Readlink(int root_fd, const std::string& rel) override {
    BeforeCall("readlink");
    return inner_->Readlink(root_fd, rel);
  }

 protected:
  Backend& inner() { return *inner_; }
  // Called before each forwarded call with its name ("pwrite", "close", ...): one place for a
  // wrapper that treats every call alike (DelayBackend sleeps here).
  virtual void BeforeCall(const char* call) { (void)call; }

 private:
  std::unique_ptr<Backend> inner_;
};

}  // namespace iorelay::backend
