// A Unix socket address from the path users write after "unix:": "/ABSOLUTE/PATH", or
// "@NAME" for Linux's abstract namespace. An abstract name has no file, and each network
// namespace (each host of a cluster, each host of the testbed) has its own: so one address,
// the same on every host, reaches the daemon of the host it is used on (the node relays).
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstring>
#include <string>

namespace iorelay {

inline bool IsAbstractUnixPath(const std::string& path) { return !path.empty() && path[0] == '@'; }

// Fills *out and returns the length to pass to bind/connect; 0 if the path is empty, neither
// absolute nor abstract, or too long.
inline socklen_t FillUnixAddress(const std::string& path, sockaddr_un* out) {
  *out = sockaddr_un{};
  out->sun_family = AF_UNIX;
  if (path.size() < 2 || path.size() >= sizeof out->sun_path) return 0;
  if (IsAbstractUnixPath(path)) {
    // sun_path[0] stays 0; the name is the bytes after it, not NUL-terminated.
    std::memcpy(out->sun_path + 1, path.data() + 1, path.size() - 1);
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
  }
  if (path[0] != '/') return 0;
  std::memcpy(out->sun_path, path.c_str(), path.size() + 1);
  return static_cast<socklen_t>(sizeof *out);
}

}  // namespace iorelay
