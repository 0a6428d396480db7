// Backend calls of a relay mapped onto the iorelay C API (one upstream request each; a merged
// preadv/pwritev below the daemon's per-request limit is one request with all its buffers).
#include "relay/relay_backend.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "client/client.h"
#include "proto/stat_convert.h"
#include "relay/upstream_path.h"

namespace iorelay::relay {
namespace {

// The C API's 0 / count / -errno as a Status.
Status FromRc(long rc) { return rc < 0 ? Status::FromErrno(static_cast<int>(-rc)) : Status::Ok(); }

Result<size_t> Count(ssize_t rc) {
  if (rc < 0) return Status::FromErrno(static_cast<int>(-rc));
  return static_cast<size_t>(rc);
}

// The links a relay path's ".." climbs out of, read upstream.
class ClientLinks final : public UpstreamLinks {
 public:
  explicit ClientLinks(iorelay_client* client) : client_(client) {}
  Result<mode_t> TypeOf(const std::string& path) override {
    struct stat st;
    if (int rc = iorelay_stat(client_, path.c_str(), &st, /*nofollow=*/1); rc < 0) {
      return Status::FromErrno(-rc, path);
    }
    return st.st_mode & S_IFMT;
  }
  Result<std::string> TargetOf(const std::string& path) override {
    std::string buf(PATH_MAX, '\0');
    ssize_t n = iorelay_readlink(client_, path.c_str(), buf.data(), buf.size());
    if (n < 0) return Status::FromErrno(static_cast<int>(-n), path);
    buf.resize(static_cast<size_t>(n));
    return buf;
  }

 private:
  iorelay_client* client_;
};

}  // namespace

RelayBackend::RelayBackend(ClientPtr client, std::vector<std::string> roots)
    : client_(std::move(client)), roots_(std::move(roots)) {}

RelayBackend::~RelayBackend() {
  // The daemon closes what it opened before it goes; whatever is left (a failed start) closes
  // here so the upstream handles do not outlive the relay's client.
  for (iorelay_file* f : files_) {
    if (f != nullptr) (void)iorelay_close(f);
  }
}

Result<std::string> RelayBackend::UpstreamPath(int root_id, const std::string& rel) const {
  if (root_id < 0 || static_cast<size_t>(root_id) >= roots_.size()) {
    return Status::FromErrno(EBADF, "no such relay export");
  }
  ClientLinks links(client_.get());
  return ResolveUpstreamPath(roots_[static_cast<size_t>(root_id)], rel, links);
}

iorelay_file* RelayBackend::File(int fd) const {
  MutexLock lock(mu_);
  if (fd < 0 || static_cast<size_t>(fd) >= files_.size()) return nullptr;
  return files_[static_cast<size_t>(fd)];
}

Result<int> RelayBackend::Open(int root_fd, const std::string& rel, int flags, mode_t mode) {
  Result<std::string> path = UpstreamPath(root_fd, rel);
  if (!path.ok()) return path.status();
  iorelay_file* f = nullptr;
  if (int rc = iorelay_open(client_.get(), path->c_str(), flags, mode, &f); rc < 0) {
    return Status::FromErrno(-rc);
  }
  MutexLock lock(mu_);
  int fd;
  if (!free_.empty()) {
    fd = free_.back();
    free_.pop_back();
  } else {
    fd = static_cast<int>(files_.size());
    files_.push_back(nullptr);
    paths_.emplace_back();
  }
  files_[static_cast<size_t>(fd)] = f;
  paths_[static_cast<size_t>(fd)] = std::move(*path);
  return fd;
}

Status RelayBackend::Close(int fd) {
  iorelay_file* f = nullptr;
  {
    MutexLock lock(mu_);
    if (fd < 0 || static_cast<size_t>(fd) >= files_.size() || !files_[fd]) {
      return Status::FromErrno(EBADF);
    }
    f = files_[static_cast<size_t>(fd)];
    files_[static_cast<size_t>(fd)] = nullptr;
    paths_[static_cast<size_t>(fd)].clear();
    free_.push_back(fd);
  }
  // Upstream answers a close after writes (write-back errors), as the daemon's caller expects.
  return FromRc(iorelay_close(f));
}

Result<size_t> RelayBackend::Pread(int fd, void* buf, size_t n, uint64_t offset) {
  iorelay_file* f = File(fd);
  if (!f) return Status::FromErrno(EBADF);
  return Count(iorelay_pread(f, buf, n, static_cast<off_t>(offset)));
}

Result<size_t> RelayBackend::Pwrite(int fd, const void* buf, size_t n, uint64_t offset) {
  iorelay_file* f = File(fd);
  if (!f) return Status::FromErrno(EBADF);
  return Count(iorelay_pwrite(f, buf, n, static_cast<off_t>(offset)));
}

Result<size_t> RelayBackend::Preadv(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) {
  iorelay_file* f = File(fd);
  if (!f) return Status::FromErrno(EBADF);
  return Count(iorelay_preadv(f, iov, iovcnt, static_cast<off_t>(offset)));
}

Result<size_t> RelayBackend::Pwritev(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) {
  iorelay_file* f = File(fd);
  if (!f) return Status::FromErrno(EBADF);
  return Count(iorelay_pwritev(f, iov, iovcnt, static_cast<off_t>(offset)));
}

Status RelayBackend::Fsync(int fd, bool datasync) {
  iorelay_file* f = File(fd);
  if (!f) return Status::FromErrno(EBADF);
  return FromRc(iorelay_fsync(f, datasync ? 1 : 0));
}

Status RelayBackend::Ftruncate(int fd, int64_t length) {
  iorelay_file* f = File(fd);
  if (!f) return Status::FromErrno(EBADF);
  return FromRc(iorelay_ftruncate(f, static_cast<off_t>(length)));
}

Status RelayBackend::Fallocate(int fd, int mode, int64_t offset, int64_t length) {
  iorelay_file* f = File(fd);
  if (!f) return Status::FromErrno(EBADF);
  return FromRc(iorelay_fallocate(f, mode, static_cast<off_t>(offset), static_cast<off_t>(length)));
}

Result<struct stat> RelayBackend::Fstat(int fd) {
  iorelay_file* f = File(fd);
  if (!f) return Status::FromErrno(EBADF);
  // The upstream attributes, st_dev and st_ino included: the file's identity (scheduler queues,
  // lock keys) is the same at every relay and at the I/O node.
  struct stat st;
  if (int rc = iorelay_fstat(f, &st); rc < 0) return Status::FromErrno(-rc);
  return st;
}

Result<struct statfs> RelayBackend::Fstatfs(int fd) {
  iorelay_file* f = File(fd);
  if (!f) return Status::FromErrno(EBADF);
  struct statfs st;
  if (int rc = iorelay_fstatfs(f, &st); rc < 0) return Status::FromErrno(-rc);
  return st;
}

Status RelayBackend::Fchmod(int fd, mode_t mode) {
  iorelay_file* f = File(fd);
  if (!f) return Status::FromErrno(EBADF);
  return FromRc(iorelay_fchmod(f, mode));
}

Status RelayBackend::Futimens(int fd, const struct timespec times[2]) {
  iorelay_file* f = File(fd);
  if (!f) return Status::FromErrno(EBADF);
  return FromRc(iorelay_futimens(f, times));
}

Result<int64_t> RelayBackend::Seek(int fd, int64_t offset, int whence) {
  iorelay_file* f = File(fd);
  if (!f) return Status::FromErrno(EBADF);
  off_t r = iorelay_lseek(f, static_cast<off_t>(offset), whence);
  if (r < 0) return Status::FromErrno(static_cast<int>(-r));
  return static_cast<int64_t>(r);
}

Status RelayBackend::SetFlags(int fd, int flags) {
  iorelay_file* f = File(fd);
  if (!f) return Status::FromErrno(EBADF);
  return FromRc(iorelay_setfl(f, flags));
}

Result<backend::DirPage> RelayBackend::ReadDir(int fd, uint64_t cookie, size_t max_entries) {
  (void)max_entries;  // upstream pages by the same protocol bound
  std::string path;
  {
    MutexLock lock(mu_);
    if (fd < 0 || static_cast<size_t>(fd) >= files_.size() || !files_[fd]) {
      return Status::FromErrno(EBADF);
    }
    path = paths_[static_cast<size_t>(fd)];
  }
  // One kReaddir page upstream per page asked (the C API's iorelay_readdir hides the cookie).
  client::Client& cl = *client_->impl;
  proto::ReaddirReply rep;
  client::Outcome r = cl.CallMsg(cl.ServerFor(path), proto::Op::kReaddir,
                                 proto::ReaddirRequest{path, cookie}, &rep);
  if (!r.ok()) return r.status;
  backend::DirPage page;
  page.entries.reserve(rep.entries.size());
  for (proto::DirEntry& e : rep.entries) {
    backend::DirEntryInfo info{e.ino, e.type, std::move(e.name), std::nullopt};
    if (e.has_attrs != 0) {
      struct stat st;
      proto::ToStat(e.attrs, &st);
      info.attrs = st;  // the I/O node's, passed down with the listing
    }
    page.entries.push_back(std::move(info));
  }
  page.next_cookie = rep.next_cookie;
  page.done = rep.done != 0;
  return page;
}

Result<struct stat> RelayBackend::Stat(int root_fd, const std::string& rel, bool nofollow) {
  Result<std::string> path = UpstreamPath(root_fd, rel);
  if (!path.ok()) return path.status();
  struct stat st;
  if (int rc = iorelay_stat(client_.get(), path->c_str(), &st, nofollow ? 1 : 0); rc < 0) {
    return Status::FromErrno(-rc);
  }
  return st;
}

Result<struct statfs> RelayBackend::Statfs(int root_fd, const std::string& rel) {
  Result<std::string> path = UpstreamPath(root_fd, rel);
  if (!path.ok()) return path.status();
  struct statfs st;
  if (int rc = iorelay_statfs(client_.get(), path->c_str(), &st); rc < 0) {
    return Status::FromErrno(-rc);
  }
  return st;
}

Status RelayBackend::Access(int root_fd, const std::string& rel, int mode) {
  Result<std::string> path = UpstreamPath(root_fd, rel);
  if (!path.ok()) return path.status();
  return FromRc(iorelay_access(client_.get(), path->c_str(), mode));
}

Status RelayBackend::Unlink(int root_fd, const std::string& rel) {
  Result<std::string> path = UpstreamPath(root_fd, rel);
  if (!path.ok()) return path.status();
  return FromRc(iorelay_unlink(client_.get(), path->c_str()));
}

Status RelayBackend::Mkdir(int root_fd, const std::string& rel, mode_t mode) {
  Result<std::string> path = UpstreamPath(root_fd, rel);
  if (!path.ok()) return path.status();
  return FromRc(iorelay_mkdir(client_.get(), path->c_str(), mode));
}

Status RelayBackend::Rmdir(int root_fd, const std::string& rel) {
  Result<std::string> path = UpstreamPath(root_fd, rel);
  if (!path.ok()) return path.status();
  return FromRc(iorelay_rmdir(client_.get(), path->c_str()));
}

Status RelayBackend::Rename(int from_root_fd, const std::string& from, int to_root_fd,
                            const std::string& to, unsigned flags) {
  Result<std::string> a = UpstreamPath(from_root_fd, from);
  if (!a.ok()) return a.status();
  Result<std::string> b = UpstreamPath(to_root_fd, to);
  if (!b.ok()) return b.status();
  return FromRc(iorelay_rename(client_.get(), a->c_str(), b->c_str(), flags));
}

Status RelayBackend::Truncate(int root_fd, const std::string& rel, int64_t length) {
  Result<std::string> path = UpstreamPath(root_fd, rel);
  if (!path.ok()) return path.status();
  return FromRc(iorelay_truncate(client_.get(), path->c_str(), static_cast<off_t>(length)));
}

Status RelayBackend::Chmod(int root_fd, const std::string& rel, mode_t mode) {
  Result<std::string> path = UpstreamPath(root_fd, rel);
  if (!path.ok()) return path.status();
  return FromRc(iorelay_chmod(client_.get(), path->c_str(), mode));
}

Status RelayBackend::Utimens(int root_fd, const std::string& rel, const struct timespec times[2],
                             bool nofollow) {
  Result<std::string> path = UpstreamPath(root_fd, rel);
  if (!path.ok()) return path.status();
  return FromRc(iorelay_utimens(client_.get(), path->c_str(), times, nofollow ? 1 : 0));
}

Status RelayBackend::Symlink(const std::string& target, int root_fd, const std::string& rel) {
  Result<std::string> path = UpstreamPath(root_fd, rel);
  if (!path.ok()) return path.status();
  return FromRc(iorelay_symlink(client_.get(), target.c_str(), path->c_str()));
}

Status RelayBackend::Link(int from_root_fd, const std::string& from, int to_root_fd,
                          const std::string& to, bool follow) {
  Result<std::string> a = UpstreamPath(from_root_fd, from);
  if (!a.ok()) return a.status();
  Result<std::string> b = UpstreamPath(to_root_fd, to);
  if (!b.ok()) return b.status();
  return FromRc(iorelay_link(client_.get(), a->c_str(), b->c_str(), follow ? 1 : 0));
}

Result<std::string> RelayBackend::Readlink(int root_fd, const std::string& rel) {
  Result<std::string> path = UpstreamPath(root_fd, rel);
  if (!path.ok()) return path.status();
  std::string buf(PATH_MAX, '\0');
  ssize_t n = iorelay_readlink(client_.get(), path->c_str(), buf.data(), buf.size());
  if (n < 0) return Status::FromErrno(static_cast<int>(-n));
  buf.resize(static_cast<size_t>(n));
  return buf;
}

Result<std::string> RelayBackend::PathOf(int fd) const {
  MutexLock lock(mu_);
  if (fd < 0 || static_cast<size_t>(fd) >= files_.size() || !files_[fd]) {
    return Status::FromErrno(EBADF);
  }
  return paths_[static_cast<size_t>(fd)];
}

nlohmann::json RelayBackend::StatsJson() const {
  size_t open = 0;
  {
    MutexLock lock(mu_);
    for (iorelay_file* f : files_) open += f != nullptr ? 1 : 0;
  }
  return {{"upstream_daemons", client_->impl->server_count()}, {"open_files", open}};
}

}  // namespace iorelay::relay
