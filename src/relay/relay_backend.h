// The backend of a relay (iorelayd --role relay): every call becomes a call of an iorelay client
// of the upstream I/O-node daemons, so what the relay's scheduler merged (one preadv/pwritev of
// several requests) crosses the network as ONE request. The relay authenticates upstream with
// the job credential like any client, and upstream confinement applies to every path.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/mutex.h"
#include "iorelay/iorelay.h"

namespace iorelay::relay {

// Owns an iorelay_client; frees it with iorelay_client_destroy.
struct ClientDeleter {
  void operator()(iorelay_client* c) const { iorelay_client_destroy(c); }
};
using ClientPtr = std::unique_ptr<iorelay_client, ClientDeleter>;

class RelayBackend : public backend::Backend {
 public:
  // `roots[i]` is the upstream path of the relay's export i: the daemon maps a client path to
  // (root id i, relative path) and the relay asks upstream for roots[i]/relative.
  RelayBackend(ClientPtr client, std::vector<std::string> roots);
  ~RelayBackend() override;
  const char* name() const override { return "relay"; }
  bool HandlesAreDescriptors() const override { return false; }

  Result<int> Open(int root_fd, const std::string& rel, int flags, mode_t mode) override;
  Status Close(int fd) override;
  Result<size_t> Pread(int fd, void* buf, size_t n, uint64_t offset) override;
  Result<size_t> Pwrite(int fd, const void* buf, size_t n, uint64_t offset) override;
  Result<size_t> Preadv(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override;
  Result<size_t> Pwritev(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) override;
  Status Fsync(int fd, bool datasync) override;
  Status Ftruncate(int fd, int64_t length) override;
  Status Fallocate(int fd, int mode, int64_t offset, int64_t length) override;
  Result<struct stat> Fstat(int fd) override;
  Result<struct statfs> Fstatfs(int fd) override;
  Status Fchmod(int fd, mode_t mode) override;
  Status Futimens(int fd, const struct timespec times[2]) override;
  Result<int64_t> Seek(int fd, int64_t offset, int whence) override;
  Status SetFlags(int fd, int flags) override;
  Result<backend::DirPage> ReadDir(int fd, uint64_t cookie, size_t max_entries) override;

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

  // The upstream path of (root id, relative path): the daemon's exports leave ".." in, and
  // they are resolved here after the links they climb out of (ResolveUpstreamPath), never
  // above the relay's root (upstream would resolve them beneath ITS root, which may be wider).
  Result<std::string> UpstreamPath(int root_id, const std::string& rel) const;

  // The upstream path a relay fd was opened with (EBADF when the fd is not open).
  Result<std::string> PathOf(int fd) const;

  // {"upstream_daemons": N, "open_files": N}.
  nlohmann::json StatsJson() const;

 private:
  // The upstream file behind a relay fd; null (EBADF) when there is none.
  iorelay_file* File(int fd) const;

  ClientPtr client_;
  const std::vector<std::string> roots_;
  mutable Mutex mu_;
  std::vector<iorelay_file*> files_ GUARDED_BY(mu_);  // index = relay fd, null = free
  std::vector<int> free_ GUARDED_BY(mu_);
  std::vector<std::string> paths_ GUARDED_BY(mu_);  // the upstream path of each fd (readdir)
};

}  // namespace iorelay::relay
