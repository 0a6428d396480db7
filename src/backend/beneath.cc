// Path resolution beneath an export root. openat2 does the work on Linux >= 5.6; the walk
// below is the fallback and refuses the same escapes.
#include "backend/beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <vector>

namespace iorelay::backend {
namespace {

constexpr int kMaxSymlinks = 40;  // as the kernel's MAXSYMLINKS
std::atomic<bool> g_no_openat2{false};

void SplitInto(const std::string& path, std::deque<std::string>* out, bool front) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) parts.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  if (front) {
    out->insert(out->begin(), parts.begin(), parts.end());
  } else {
    out->insert(out->end(), parts.begin(), parts.end());
  }
}

// Owns the chain of directories walked so far, so `..` can go back without a lookup.
class DirStack {
 public:
  ~DirStack() {
    for (int fd : fds_) ::close(fd);
  }
  void Push(int fd) { fds_.push_back(fd); }
  bool AtRoot() const { return fds_.size() == 1; }
  void Pop() {
    ::close(fds_.back());
    fds_.pop_back();
  }
  int top() const { return fds_.back(); }

 private:
  std::vector<int> fds_;
};

// Reads the target of the symlink `name` in `dir` and queues its components.
Status Expand(int dir, const char* name, int* symlinks, std::deque<std::string>* todo) {
  if (++*symlinks > kMaxSymlinks) return Status::FromErrno(ELOOP, "too many symlinks");
  char buf[4096];
  ssize_t n = ::readlinkat(dir, name, buf, sizeof buf - 1);
  if (n < 0) return Status::LastError("readlink");
  if (n > 0 && buf[0] == '/') return Status::PermissionDenied("absolute symlink leaves the export");
  SplitInto(std::string(buf, static_cast<size_t>(n)), todo, /*front=*/true);
  return Status::Ok();
}

// The kernel reads a path only up to its first NUL, so a checked name with one in it is not the
// name opened ("..\0x" would be checked as itself and opened as "..").
Status RejectNul(const std::string& rel) {
  if (rel.find('\0') != std::string::npos) return Status::InvalidArgument("path contains a NUL");
  return Status::Ok();
}

}  // namespace

Result<int> OpenBeneathByWalk(int root_fd, const std::string& rel, int flags, mode_t mode) {
  IORELAY_RETURN_IF_ERROR(RejectNul(rel));
  if (!rel.empty() && rel[0] == '/') return Status::PermissionDenied("absolute path");
  int start = ::openat(root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (start < 0) return Status::LastError("open export root");
  DirStack dirs;
  dirs.Push(start);
  std::deque<std::string> todo;
  SplitInto(rel, &todo, /*front=*/false);
  int symlinks = 0;
  while (!todo.empty()) {
    std::string comp = std::move(todo.front());
    todo.pop_front();
    bool last = todo.empty();
    if (comp == ".") continue;
    if (comp == "..") {
      if (dirs.AtRoot()) return Status::PermissionDenied("path leaves the export");
      dirs.Pop();
      continue;
    }
    struct stat st;
    bool exists = ::fstatat(dirs.top(), comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (!exists && (errno != ENOENT || !last)) return Status::LastError("resolve " + rel);
    if (exists && S_ISLNK(st.st_mode) && (!last || (flags & O_NOFOLLOW) == 0)) {
      IORELAY_RETURN_IF_ERROR(Expand(dirs.top(), comp.c_str(), &symlinks, &todo));
      continue;
    }
    if (!last) {
      int fd = ::openat(dirs.top(), comp.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) return Status::LastError("resolve " + rel);
      dirs.Push(fd);
      continue;
    }
    int fd = ::openat(dirs.top(), comp.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) return Status::LastError("open " + rel);
    return fd;
  }
  // The path named a directory on the stack ("", ".", "a/..").
  int fd = ::openat(dirs.top(), ".", flags | O_CLOEXEC, mode);
  if (fd < 0) return Status::LastError("open " + rel);
  return fd;
}

Result<int> OpenBeneath(int root_fd, const std::string& rel, int flags, mode_t mode) {
  IORELAY_RETURN_IF_ERROR(RejectNul(rel));
  if (!g_no_openat2.load(std::memory_order_relaxed)) {
    struct open_how how = {};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
    // openat2 refuses a mode unless the open may create. (O_TMPFILE's bits include
    // O_DIRECTORY's: only all of them make a temporary file.)
    const bool creates = (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
    how.mode = creates ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    const char* path = rel.empty() ? "." : rel.c_str();
    for (int attempt = 0; attempt < 8; ++attempt) {
      long fd = ::syscall(SYS_openat2, root_fd, path, &how, sizeof how);
      if (fd >= 0) return static_cast<int>(fd);
      if (errno == EAGAIN) continue;  // a concurrent rename raced the resolution: retry
      if (errno == ENOSYS) break;
      // EXDEV is openat2's "this would leave the root"; a local user would see EACCES for a
      // path they may not reach, so that is what the client gets.
      if (errno == EXDEV) return Status::PermissionDenied("path leaves the export: " + rel);
      return Status::LastError("open " + rel);
    }
    if (errno != ENOSYS) return Status::LastError("open " + rel);
    g_no_openat2.store(true, std::memory_order_relaxed);
  }
  return OpenBeneathByWalk(root_fd, rel, flags, mode);
}

Result<ParentRef> OpenParentBeneath(int root_fd, const std::string& rel) {
  IORELAY_RETURN_IF_ERROR(RejectNul(rel));
  std::string path = rel;
  while (!path.empty() && path.back() == '/') path.pop_back();
  size_t slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  ParentRef ref;
  if (name.empty() || name == "." || name == "..") {
    Result<int> fd = OpenBeneath(root_fd, path, O_PATH | O_DIRECTORY, 0);
    if (!fd.ok()) return fd.status();
    ref.fd = *fd;
    ref.name.assign(1, '.');  // (not = ".": g++ 12 -Wrestrict false positive)
    ref.is_self = true;
    return ref;
  }
  std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash);
  Result<int> fd = OpenBeneath(root_fd, dir, O_PATH | O_DIRECTORY, 0);
  if (!fd.ok()) return fd.status();
  // "file/" names a directory: an existing entry that is not one is ENOTDIR, as the kernel's
  // walk says, and not the file (unlink("file/") must not remove it). A symbolic link there is
  // not one either: unlink, rmdir and rename do not follow their last component, even before a
  // slash (and nothing here looks through a link, which could lead out of the root).
  struct stat st;
  if (path.size() != rel.size() && ::fstatat(*fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      !S_ISDIR(st.st_mode)) {
    ::close(*fd);
    return Status::FromErrno(ENOTDIR, "not a directory: " + rel);
  }
  ref.fd = *fd;
  ref.name = std::move(name);
  return ref;
}

}  // namespace iorelay::backend
