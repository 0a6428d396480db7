// NullBackend: synthetic answers for every call, so a benchmark sees only daemon costs.
#include "backend/null_backend.h"

#include <dirent.h>
#include <fcntl.h>

#include <cstring>

namespace iorelay::backend {
namespace {

struct stat FakeStat(bool directory) {
  struct stat st = {};
  st.st_mode = directory ? (S_IFDIR | 0755) : (S_IFREG | 0644);
  st.st_nlink = 1;
  st.st_blksize = 4096;
  return st;
}

}  // namespace

Result<int> NullBackend::Open(int, const std::string&, int, mode_t) {
  return next_fd_.fetch_add(1, std::memory_order_relaxed);
}

Result<size_t> NullBackend::Pread(int, void* buf, size_t n, uint64_t) {
  std::memset(buf, 0, n);
  return n;
}

Result<size_t> NullBackend::Preadv(int, const struct iovec* iov, int iovcnt, uint64_t) {
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) {
    std::memset(iov[i].iov_base, 0, iov[i].iov_len);
    total += iov[i].iov_len;
  }
  return total;
}

Result<size_t> NullBackend::Pwritev(int, const struct iovec* iov, int iovcnt, uint64_t) {
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  return total;
}

Result<struct stat> NullBackend::Fstat(int) { return FakeStat(false); }

Result<struct statfs> NullBackend::Fstatfs(int) {
  struct statfs st = {};
  st.f_bsize = 4096;
  st.f_namelen = 255;
  return st;
}

Result<DirPage> NullBackend::ReadDir(int, uint64_t, size_t) {
  return DirPage{{{1, DT_DIR, "."}, {1, DT_DIR, ".."}}, 0, true};
}

Result<struct stat> NullBackend::Stat(int, const std::string& rel, bool) {
  return FakeStat(rel.empty() || rel == ".");
}

Result<struct statfs> NullBackend::Statfs(int fd, const std::string&) { return Fstatfs(fd); }

}  // namespace iorelay::backend
