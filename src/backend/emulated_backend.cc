// EmulatedBackend: the device model's time is slept before the real call, under the lock.
#include "backend/emulated_backend.h"

#include <chrono>
#include <thread>

#include "common/monotonic.h"

namespace iorelay::backend {
namespace {

uint64_t Total(const struct iovec* iov, int iovcnt) {
  uint64_t n = 0;
  for (int i = 0; i < iovcnt; ++i) n += iov[i].iov_len;
  return n;
}

}  // namespace

void EmulatedBackend::Serve(int fd, uint64_t offset, uint64_t length, bool write) {
  // The file (device, inode) is the region of the device; two handles of one file share it.
  Result<struct stat> st = inner().Fstat(fd);
  uint64_t object = st.ok() ? (static_cast<uint64_t>(st->st_dev) << 40) ^ st->st_ino : 0;
  int64_t done_ns = model_.Submit(MonotonicNs(), device::Access{object, offset, length, write});
  std::this_thread::sleep_until(std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::nanoseconds(done_ns))));
}

Result<size_t> EmulatedBackend::Pread(int fd, void* buf, size_t n, uint64_t offset) {
  MutexLock lock(mu_);
  Serve(fd, offset, n, /*write=*/false);
  return inner().Pread(fd, buf, n, offset);
}

Result<size_t> EmulatedBackend::Pwrite(int fd, const void* buf, size_t n, uint64_t offset) {
  MutexLock lock(mu_);
  Serve(fd, offset, n, /*write=*/true);
  return inner().Pwrite(fd, buf, n, offset);
}

Result<size_t> EmulatedBackend::Preadv(int fd, const struct iovec* iov, int iovcnt,
                                       uint64_t offset) {
  MutexLock lock(mu_);
  Serve(fd, offset, Total(iov, iovcnt), /*write=*/false);
  return inner().Preadv(fd, iov, iovcnt, offset);
}

Result<size_t> EmulatedBackend::Pwritev(int fd, const struct iovec* iov, int iovcnt,
                                        uint64_t offset) {
  MutexLock lock(mu_);
  Serve(fd, offset, Total(iov, iovcnt), /*write=*/true);
  return inner().Pwritev(fd, iov, iovcnt, offset);
}

Result<size_t> EmulatedBackend::WriteFromPipe(int fd, int pipe_fd, size_t n, uint64_t offset) {
  MutexLock lock(mu_);
  Serve(fd, offset, n, /*write=*/true);
  return inner().WriteFromPipe(fd, pipe_fd, n, offset);
}

Result<size_t> EmulatedBackend::ReadToPipe(int fd, int pipe_fd, size_t n, uint64_t offset) {
  MutexLock lock(mu_);
  Serve(fd, offset, n, /*write=*/false);
  return inner().ReadToPipe(fd, pipe_fd, n, offset);
}

}  // namespace iorelay::backend
