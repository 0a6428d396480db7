// Longest-prefix mapping of client paths onto export roots.
#include "daemon/exports.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace iorelay::daemon {

Exports::~Exports() {
  for (const Entry& e : entries_) {
    if (e.owned) ::close(e.root_fd);
  }
}

Status Exports::Add(const std::string& prefix, const std::string& root) {
  if (prefix.empty() || prefix[0] != '/') {
    return Status::InvalidArgument("export prefix must be absolute: '" + prefix + "'");
  }
  int fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::LastError("export root " + root + " (must be a directory)");
  std::string p = prefix;
  while (!p.empty() && p.back() == '/') p.pop_back();
  entries_.push_back(Entry{p, fd, true});
  return Status::Ok();
}

Status Exports::AddOpened(const std::string& prefix, int fd) {
  if (prefix.empty() || prefix[0] != '/') {
    ::close(fd);
    return Status::InvalidArgument("export prefix must be absolute: '" + prefix + "'");
  }
  std::string p = prefix;
  while (!p.empty() && p.back() == '/') p.pop_back();
  entries_.push_back(Entry{p, fd, true});
  return Status::Ok();
}

Status Exports::AddVirtual(const std::string& prefix, int root_id) {
  if (prefix.empty() || prefix[0] != '/') {
    return Status::InvalidArgument("export prefix must be absolute: '" + prefix + "'");
  }
  std::string p = prefix;
  while (!p.empty() && p.back() == '/') p.pop_back();
  entries_.push_back(Entry{p, root_id, false});
  return Status::Ok();
}

Result<Mapped> Exports::Map(const std::string& client_path) const {
  if (client_path.empty() || client_path[0] != '/') {
    return Status::PermissionDenied("not an absolute path: " + client_path);
  }
  // A name cannot hold a NUL byte; past one, the kernel would read a different path than the
  // one checked here ("..\0" passed a comparison with "..").
  if (client_path.find('\0') != std::string::npos) {
    return Status::InvalidArgument("path contains a NUL byte");
  }
  const Entry* best = nullptr;
  for (const Entry& e : entries_) {
    bool under = client_path.compare(0, e.prefix.size(), e.prefix) == 0 &&
                 (client_path.size() == e.prefix.size() || client_path[e.prefix.size()] == '/');
    if (under && (best == nullptr || e.prefix.size() > best->prefix.size())) best = &e;
  }
  if (best == nullptr) return Status::PermissionDenied("path under no export: " + client_path);
  size_t i = best->prefix.size();
  while (i < client_path.size() && client_path[i] == '/') ++i;
  return Mapped{best->root_fd, client_path.substr(i)};
}

}  // namespace iorelay::daemon
