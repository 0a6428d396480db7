// Exported trees: maps a client's absolute path to (root directory fd, path relative to it)
// by the longest matching prefix. The root fds are opened once at start-up.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace iorelay::daemon {

struct Mapped {
  int root_fd = -1;
  std::string rel;  // relative to the root; "" is the root itself; may contain ".."
};

class Exports {
 public:
  Exports() = default;
  ~Exports();
  Exports(const Exports&) = delete;
  Exports& operator=(const Exports&) = delete;

  // Opens `root` (must be a directory). `prefix` must be absolute; trailing '/' ignored.
  Status Add(const std::string& prefix, const std::string& root);
  // Takes over `fd`, a directory opened (O_PATH) and checked by the caller (an admission).
  Status AddOpened(const std::string& prefix, int fd);
  // Relay role: `prefix` maps to `root_id`, a number the relay backend knows (the index of
  // the export's upstream path), not a local directory; nothing is opened or closed.
  Status AddVirtual(const std::string& prefix, int root_id);

  // A path with a NUL byte is refused with EINVAL. A path under no export is refused with EACCES
  // rather than ENOENT: the daemon does not serve it at all, like a path the caller may not reach,
  // and ENOENT would suggest that a create there could succeed.
  Result<Mapped> Map(const std::string& client_path) const;

 private:
  struct Entry {
    std::string prefix;  // without trailing '/', "" for "/"
    int root_fd;
    bool owned = true;  // root_fd is a descriptor this object closes
  };
  std::vector<Entry> entries_;
};

}  // namespace iorelay::daemon
