// The lock file and the live-daemon probe behind UnixPathClaim.
#include "daemon/unix_path_claim.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace iorelay::daemon {
namespace {

// How long a connect to the path may stay in progress before whatever is there counts as alive.
// (A Unix socket's connect never stays in progress on Linux: it succeeds, is refused, or says
// EAGAIN when the listener's queue is full. The bound is for a kernel that would.)
constexpr int kProbeTimeoutMs = 200;

std::string InUse(const std::string& path, const std::string& why) {
  return "unix:" + path + ": another daemon holds this path (" + why +
         "); stop it or choose another path";
}

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// "process N" as the holder wrote its pid into the lock file, or "a process".
std::string HolderOf(int lock_fd) {
  char text[24] = {};
  ssize_t n = ::pread(lock_fd, text, sizeof text - 1, 0);
  std::string pid(text, n > 0 ? static_cast<size_t>(n) : 0);
  while (!pid.empty() && pid.back() == '\n') pid.pop_back();
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) return "a process";
  return "process " + pid;
}

// Whether a process accepts connections at `addr` (a stopped daemon's kernel still completes
// them, until its queue is full).
Result<bool> SomethingListens(const std::string& path, const sockaddr_un& addr, std::string* why) {
  int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (probe < 0) return Status::LastError("socket");
  int rc = ::connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  int err = rc == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    struct pollfd p = {probe, POLLOUT, 0};
    if (::poll(&p, 1, kProbeTimeoutMs) == 1) {
      socklen_t len = sizeof err;
      ::getsockopt(probe, SOL_SOCKET, SO_ERROR, &err, &len);
    }
  }
  ::close(probe);
  switch (err) {
    case 0:
      *why = "it answers there without " + path + ".lock: an older iorelayd?";
      return true;
    case EAGAIN:
    case EINPROGRESS:
      *why = "it listens there but takes no connections: stopped or overloaded";
      return true;
    case ECONNREFUSED:
    case ENOENT:
      return false;
    default:
      return Status::FromErrno(err, "probing unix:" + path);
  }
}

// With the lock held: PATH is free, or made free by removing a socket nobody listens on.
Status FreePath(const std::string& path, const sockaddr_un& addr) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? Status::Ok() : Status::LastError("unix:" + path);
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Status::FromErrno(EEXIST, "unix:" + path + " exists and is not a socket");
  }
  std::string why;
  Result<bool> live = SomethingListens(path, addr, &why);
  if (!live.ok()) return live.status();
  if (*live) return Status::FromErrno(EADDRINUSE, InUse(path, why));
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::LastError("removing the stale socket unix:" + path);
  }
  return Status::Ok();
}

// PATH.lock, locked: its descriptor, with this process's pid written in it.
Result<int> LockFile(const std::string& path, const std::string& lock_path) {
  // A daemon that stops removes its lock file: one opened just before that is locked by nobody
  // else and names nothing, so the lock is taken again on the file the path now names.
  for (int attempt = 0; attempt < 16; ++attempt) {
    int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return Status::LastError("unix:" + path + ": lock file " + lock_path);
    struct stat mine;
    if (::fstat(fd, &mine) != 0 || !S_ISREG(mine.st_mode)) {
      ::close(fd);
      return Status::FromErrno(
          EEXIST, "unix:" + path + ": " + lock_path + " exists and is not a regular file");
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string holder = HolderOf(fd);
      ::close(fd);
      if (err == EWOULDBLOCK) {
        return Status::FromErrno(EADDRINUSE, InUse(path, holder + " has " + lock_path + " locked"));
      }
      return Status::FromErrno(err, "locking " + lock_path);
    }
    struct stat named;
    if (::lstat(lock_path.c_str(), &named) == 0 && SameFile(mine, named)) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        // (only the holder's name in a refusal is lost)
      }
      return fd;
    }
    ::close(fd);
  }
  return Status::FromErrno(EAGAIN, "unix:" + path + ": " + lock_path + " keeps being replaced");
}

}  // namespace

Result<std::unique_ptr<UnixPathClaim>> UnixPathClaim::Take(const std::string& path,
                                                           const sockaddr_un& addr) {
  const std::string lock_path = path + ".lock";
  Result<int> fd = LockFile(path, lock_path);
  if (!fd.ok()) return fd.status();
  std::unique_ptr<UnixPathClaim> claim(new UnixPathClaim(lock_path, *fd));
  IORELAY_RETURN_IF_ERROR(FreePath(path, addr));
  return claim;
}

UnixPathClaim::~UnixPathClaim() {
  struct stat mine, named;
  if (::fstat(lock_fd_, &mine) == 0 && ::lstat(lock_path_.c_str(), &named) == 0 &&
      SameFile(mine, named)) {
    ::unlink(lock_path_.c_str());
  }
  ::close(lock_fd_);  // releases the lock
}

}  // namespace iorelay::daemon
