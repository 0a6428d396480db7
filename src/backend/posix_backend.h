// The backend that does real I/O with POSIX calls on the local (or parallel) file system.
#pragma once

#include "backend/backend.h"

namespace iorelay::backend {

class PosixBackend final : public Backend {
 public:
  const char* name() const override { return "posix"; }
  Result<int> Open(int root_fd, const std::string& rel, int flags, mode_t mode) override;
  Status Close(int fd) override;
  Result<size_t> Pread(int fd, void* buf, size_t n, uint64_t offset) override;
  Result<size_t> Pwrite(int fd, const void* buf, size_t n, uint64_t offset) override;
  Result<size_t> Preadv(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override;
  Result<size_t> Pwritev(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override;
  Result<size_t> WriteFromPipe(int fd, int pipe_fd, size_t n, uint64_t offset) override;
  Result<size_t> ReadToPipe(int fd, int pipe_fd, size_t n, uint64_t offset) override;
  Status Fsync(int fd, bool datasync) override;
  Status Ftruncate(int fd, int64_t length) override;
  Status Fallocate(int fd, int mode, int64_t offset, int64_t length) override;
  Result<struct stat> Fstat(int fd) override;
  Result<struct statfs> Fstatfs(int fd) override;
  Result<struct stat> StatEntry(int dir_fd, const std::string& name) override;
  Status Fchmod(int fd, mode_t mode) override;
  Status Futimens(int fd, const struct timespec times[2]) override;
  uint32_t DirectIoAlignment(int fd) override;
  Result<int64_t> Seek(int fd, int64_t offset, int whence) override;
  Status SetFlags(int fd, int flags) override;
  Result<DirPage> ReadDir(int fd, uint64_t cookie, size_t max_entries) override;

  Result<struct stat> Stat(int root_fd, const std::string& rel, bool nofollow) override;
  Result<struct statfs> Statfs(int root_fd, const std::string& rel) override;
  Status Access(int root_fd, const std::string& rel, int mode) override;
  Status Unlink(int root_fd, const std::string& rel) override;
  Status Mkdir(int root_fd, const std::string& rel, mode_t mode) override;
  Status Rmdir(int root_fd, const std::string& rel) override;
  Status Rename(int from_root_fd, const std::string& from, int to_root_fd, const std::string& to,
                unsigned flags) override;
  Status Truncate(int root_fd, const std::string& rel, int64_t length) override;
  Status Chmod(int root_fd, const std::string& rel, mode_t mode) override;
  Status Utimens(int root_fd, const std::string& rel, const struct timespec times[2],
                 bool nofollow) override;
  Status Symlink(const std::string& target, int root_fd, const std::string& rel) override;
  Status Link(int from_root_fd, const std::string& from, int to_root_fd, const std::string& to,
              bool follow) override;
  Result<std::string> Readlink(int root_fd, const std::string& rel) override;
};

}  // namespace iorelay::backend
