// The Backend interface: every file-data and path operation the daemon performs goes through
// one, so tests can swap the file system for a null or delay-injecting implementation.
#pragma once

#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace iorelay::backend {

// One directory entry as readdir(3) gives it.
struct DirEntryInfo {
  uint64_t ino = 0;
  uint8_t type = 0;  // DT_*
  std::string name;
  // The entry's lstat when the listing brought it (a relay's, from upstream); else the daemon
  // asks StatEntry.
  std::optional<struct stat> attrs;
};

// One page of a directory listing and where the next one starts.
struct DirPage {
  std::vector<DirEntryInfo> entries;
  uint64_t next_cookie = 0;  // give it to the next ReadDir call
  bool done = false;         // no entry after these
};

// All methods are thread-safe and return the errno the underlying call gave. A backend
// fd is an int owned by the backend; it stays valid until Close(). Path operations take
// a directory fd (an export root) and a path relative to it, and never resolve anything
// outside that directory: `..` above it, absolute symlinks and symlinks leading outside
// are refused with EACCES.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  // open(2) of `rel` beneath `root_fd` ("" or "." is the root itself). O_CLOEXEC is added.
  // Regular files and directories only: anything else (a FIFO, a device, a socket) is ENXIO,
  // found without blocking.
  virtual Result<int> Open(int root_fd, const std::string& rel, int flags, mode_t mode) = 0;
  // Whether Open's handles are descriptors of this process (false: handles of the backend's
  // own, as the null and relay backends give), which the daemon's descriptor reserve bounds.
  virtual bool HandlesAreDescriptors() const { return true; }
  virtual Status Close(int fd) = 0;
  virtual Result<size_t> Pread(int fd, void* buf, size_t n, uint64_t offset) = 0;
  virtual Result<size_t> Pwrite(int fd, const void* buf, size_t n, uint64_t offset) = 0;
  virtual Result<size_t> Preadv(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) = 0;
  virtual Result<size_t> Pwritev(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) = 0;
  // splice(2) between the file and a pipe, so that data crosses no memory of the daemon's
  // (docs/daemon.md, Piped data). WriteFromPipe writes up to `n` bytes that the pipe holds at
  // `offset`; ReadToPipe reads up to `n` bytes at `offset` into the pipe, stopping early at the
  // end of file or when the pipe is full (it never waits for room). Both return the count moved,
  // or the error when nothing moved. ENOTSUP: this backend cannot (the caller copies instead).
  virtual Result<size_t> WriteFromPipe(int fd, int pipe_fd, size_t n, uint64_t offset) {
    (void)fd, (void)pipe_fd, (void)n, (void)offset;
    return Status::FromErrno(ENOTSUP, "splice");
  }
  virtual Result<size_t> ReadToPipe(int fd, int pipe_fd, size_t n, uint64_t offset) {
    (void)fd, (void)pipe_fd, (void)n, (void)offset;
    return Status::FromErrno(ENOTSUP, "splice");
  }
  virtual Status Fsync(int fd, bool datasync) = 0;
  virtual Status Ftruncate(int fd, int64_t length) = 0;
  virtual Status Fallocate(int fd, int mode, int64_t offset, int64_t length) = 0;
  virtual Result<struct stat> Fstat(int fd) = 0;
  // fchmod(2) and futimens(2); `times` as utimensat(2) takes them (UTIME_NOW, UTIME_OMIT).
  virtual Status Fchmod(int fd, mode_t mode) = 0;
  virtual Status Futimens(int fd, const struct timespec times[2]) = 0;
  virtual Result<struct statfs> Fstatfs(int fd) = 0;
  // The alignment in bytes that O_DIRECT calls on `fd` need for their offset and length
  // (statx STATX_DIOALIGN where the file system reports it; 512 otherwise).
  virtual uint32_t DirectIoAlignment(int fd) {
    (void)fd;
    return 512;
  }
  // lseek(2) on the backend fd; the daemon keeps offsets itself and uses this only for
  // SEEK_DATA and SEEK_HOLE.
  virtual Result<int64_t> Seek(int fd, int64_t offset, int whence) = 0;
  // fcntl(F_SETFL).
  virtual Status SetFlags(int fd, int flags) = 0;
  // Up to `max_entries` entries of a directory opened with Open(..., O_DIRECTORY), "." and ".."
  // included, from `cookie` (0: the start; else a next_cookie of an earlier page of the same
  // directory, valid across opens as a telldir position is).
  virtual Result<DirPage> ReadDir(int fd, uint64_t cookie, size_t max_entries) = 0;
  // lstat of `name`, one entry of the directory `dir_fd` (opened by Open(..., O_DIRECTORY)), as
  // a listing's page reads its entries' attributes. ENOTSUP: this backend cannot (the client
  // then stats each entry itself).
  virtual Result<struct stat> StatEntry(int dir_fd, const std::string& name) {
    (void)dir_fd, (void)name;
    return Status::FromErrno(ENOTSUP, "stat of a listed entry");
  }

  virtual Result<struct stat> Stat(int root_fd, const std::string& rel, bool nofollow) = 0;
  virtual Result<struct statfs> Statfs(int root_fd, const std::string& rel) = 0;
  virtual Status Access(int root_fd, const std::string& rel, int mode) = 0;
  virtual Status Unlink(int root_fd, const std::string& rel) = 0;
  virtual Status Mkdir(int root_fd, const std::string& rel, mode_t mode) = 0;
  virtual Status Rmdir(int root_fd, const std::string& rel) = 0;
  virtual Status Rename(int from_root_fd, const std::string& from, int to_root_fd,
                        const std::string& to, unsigned flags) = 0;
  virtual Status Truncate(int root_fd, const std::string& rel, int64_t length) = 0;
  // chmod(2): follows a final symbolic link, within the root.
  virtual Status Chmod(int root_fd, const std::string& rel, mode_t mode) = 0;
  // utimensat(2) of the file (nofollow: of a final symbolic link itself), within the root.
  virtual Status Utimens(int root_fd, const std::string& rel, const struct timespec times[2],
                         bool nofollow) = 0;
  // symlinkat(2): `target` is stored as given (it is resolved beneath a root when followed).
  virtual Status Symlink(const std::string& target, int root_fd, const std::string& rel) = 0;
  // linkat(2); follow: link the file a final symbolic link of `from` names, within the root.
  virtual Status Link(int from_root_fd, const std::string& from, int to_root_fd,
                      const std::string& to, bool follow) = 0;
  virtual Result<std::string> Readlink(int root_fd, const std::string& rel) = 0;
};

// "posix", "null" or "emulated:PROFILE" (POSIX behind a device model, PROFILE as
// device::ParseDeviceProfile reads it: "hdd", "seek=8ms,bw=100MBps"); `delay_us` > 0 wraps
// the result in a DelayBackend. EINVAL for an unknown name or a bad profile.
Result<std::unique_ptr<Backend>> MakeBackend(const std::string& name, int64_t delay_us);

}  // namespace iorelay::backend
