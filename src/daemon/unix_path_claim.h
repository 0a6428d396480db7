// Which daemon may bind a Unix socket path: the one holding PATH.lock (an exclusive flock, kept
// for the daemon's life). Two daemons starting on one path can never both take it, and a
// second daemon is refused at once, never waiting on a first one that is stopped.
#pragma once

#include <sys/un.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace iorelay::daemon {

class UnixPathClaim {
 public:
  // Locks PATH.lock (made 0600 when missing, never through a symbolic link) and frees PATH for
  // bind: a socket nobody listens on (left by a daemon that was killed) is removed.
  // EADDRINUSE, with a message naming PATH and its holder: another daemon holds the lock, or
  // something listens at PATH without it (its connect succeeds, or its queue of connections is
  // full: it is stopped or overloaded; the probe never waits more than a moment). EEXIST: PATH
  // is not a socket.
  static Result<std::unique_ptr<UnixPathClaim>> Take(const std::string& path,
                                                     const sockaddr_un& addr);
  // Removes PATH.lock while it is still the file locked here, then releases the lock.
  ~UnixPathClaim();
  UnixPathClaim(const UnixPathClaim&) = delete;
  UnixPathClaim& operator=(const UnixPathClaim&) = delete;

 private:
  UnixPathClaim(std::string lock_path, int lock_fd)
      : lock_path_(std::move(lock_path)), lock_fd_(lock_fd) {}
  std::string lock_path_;
  int lock_fd_;
};

}  // namespace iorelay::daemon
