// PosixBackend: thin wrappers over the system calls; path operations resolve the parent
// beneath the export root first and then use the *at() calls on it.
#include "backend/posix_backend.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "backend/beneath.h"

namespace iorelay::backend {
namespace {

// Closes an fd at scope exit.
class FdGuard {
 public:
  explicit FdGuard(int fd) : fd_(fd) {}
  ~FdGuard() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

Result<size_t> Count(ssize_t n, const char* what) {
  if (n < 0) return Status::LastError(what);
  return static_cast<size_t>(n);
}

Status Check(int rc, const char* what) { return rc == 0 ? Status::Ok() : Status::LastError(what); }

// The magic link to a descriptor's inode: calls that refuse O_PATH descriptors (fchmod,
// futimens, linkat without a capability) reach the inode through it.
std::string ProcFdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// A new name given with a trailing slash ("name/"), which Linux's symlink and link refuse: EEXIST
// when the name exists (of whatever type), else ENOENT. Ok when there is no trailing slash.
Status RefuseSlashedNewName(int root_fd, std::string rel) {
  if (rel.empty() || rel.back() != '/') return Status::Ok();
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  Result<ParentRef> parent = OpenParentBeneath(root_fd, rel);
  if (!parent.ok()) return parent.status();
  FdGuard guard(parent->fd);
  struct stat st;
  const bool exists = parent->is_self ||
                      ::fstatat(guard.get(), parent->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  return Status::FromErrno(exists ? EEXIST : ENOENT, "new name ends with /");
}

// A client's create gets the mode the client sent: the client applied its own mask (the
// interposer its application's umask), so the daemon's must not apply again. The thread that
// creates unshares its file-system attributes once (CLONE_FS: umask, cwd and root, which the
// backend does not use: its paths are beneath export roots) and clears its umask there, leaving
// the daemon's other threads their own.
void ExactCreationModes() {
  thread_local bool done = false;
  if (done) return;
  done = true;
  if (::unshare(CLONE_FS) == 0) ::umask(0);
}

}  // namespace

// Regular files and directories only. The open itself is non-blocking: opening a FIFO (or a
// device) may wait for a peer indefinitely, which would hold a handler thread, or an event loop
// running the request inline, for every client. The caller's own O_NONBLOCK choice is then
// restored on what was opened (F_SETFL sets the status flags the caller asked for). An O_PATH
// open opens nothing (it cannot block, and openat2 refuses O_NONBLOCK with it; its descriptor
// takes no F_SETFL), so it is made as asked.
Result<int> PosixBackend::Open(int root_fd, const std::string& rel, int flags, mode_t mode) {
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) ExactCreationModes();
  const bool path_only = (flags & O_PATH) != 0;
  Result<int> fd = OpenBeneath(root_fd, rel, path_only ? flags : flags | O_NONBLOCK, mode);
  if (!fd.ok()) return fd;
  FdGuard guard(*fd);
  struct stat st;
  if (::fstat(*fd, &st) != 0) return Status::LastError("fstat");
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    return Status::FromErrno(ENXIO, "not a regular file or directory: not forwarded");
  }
  if (!path_only && (flags & O_NONBLOCK) == 0 && ::fcntl(*fd, F_SETFL, flags) != 0) {
    return Status::LastError("fcntl(F_SETFL)");
  }
  return guard.Release();
}

Status PosixBackend::Close(int fd) { return Check(::close(fd), "close"); }

Result<size_t> PosixBackend::Pread(int fd, void* buf, size_t n, uint64_t offset) {
  return Count(::pread(fd, buf, n, static_cast<off_t>(offset)), "pread");
}

Result<size_t> PosixBackend::Pwrite(int fd, const void* buf, size_t n, uint64_t offset) {
  return Count(::pwrite(fd, buf, n, static_cast<off_t>(offset)), "pwrite");
}

Result<size_t> PosixBackend::Preadv(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) {
  return Count(::preadv(fd, iov, iovcnt, static_cast<off_t>(offset)), "preadv");
}

Result<size_t> PosixBackend::Pwritev(int fd, const struct iovec* iov, int iovcnt, uint64_t offset) {
  return Count(::pwritev(fd, iov, iovcnt, static_cast<off_t>(offset)), "pwritev");
}

// A splice may move less than asked (a page at a time from a pipe whose buffers are small, a
// signal): both loop like a full pread or pwrite would.
Result<size_t> PosixBackend::WriteFromPipe(int fd, int pipe_fd, size_t n, uint64_t offset) {
  size_t done = 0;
  while (done < n) {
    loff_t at = static_cast<loff_t>(offset + done);
    ssize_t r = ::splice(pipe_fd, nullptr, fd, &at, n - done, SPLICE_F_MOVE);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (done > 0) break;
      // 0: the pipe held less than promised (its writer's end is not the daemon's).
      return r == 0 ? Status::FromErrno(EIO, "splice: the pipe ran dry")
                    : Status::LastError("splice");
    }
    done += static_cast<size_t>(r);
  }
  return done;
}

Result<size_t> PosixBackend::ReadToPipe(int fd, int pipe_fd, size_t n, uint64_t offset) {
  size_t done = 0;
  while (done < n) {
    loff_t at = static_cast<loff_t>(offset + done);
    ssize_t r = ::splice(fd, &at, pipe_fd, nullptr, n - done, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) break;  // end of file
    if (r < 0) {
      if (done > 0 || errno == EAGAIN) break;  // the pipe is full: what moved is the answer
      return Status::LastError("splice");
    }
    done += static_cast<size_t>(r);
  }
  return done;
}

Status PosixBackend::Fsync(int fd, bool datasync) {
  return Check(datasync ? ::fdatasync(fd) : ::fsync(fd), "fsync");
}

Status PosixBackend::Ftruncate(int fd, int64_t length) {
  return Check(::ftruncate(fd, length), "ftruncate");
}

Status PosixBackend::Fallocate(int fd, int mode, int64_t offset, int64_t length) {
  return Check(::fallocate(fd, mode, offset, length), "fallocate");
}

Result<struct stat> PosixBackend::Fstat(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::LastError("fstat");
  return st;
}

Result<struct statfs> PosixBackend::Fstatfs(int fd) {
  struct statfs st;
  if (::fstatfs(fd, &st) != 0) return Status::LastError("fstatfs");
  return st;
}

Status PosixBackend::Fchmod(int fd, mode_t mode) { return Check(::fchmod(fd, mode), "fchmod"); }

Status PosixBackend::Futimens(int fd, const struct timespec times[2]) {
  return Check(::futimens(fd, times), "futimens");
}

uint32_t PosixBackend::DirectIoAlignment(int fd) {
  // glibc's struct statx is the kernel's (it includes <linux/stat.h> when present), so the
  // direct I/O fields of Linux 6.1 are there; older kernels leave STATX_DIOALIGN unset.
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
      (stx.stx_mask & STATX_DIOALIGN) != 0 && stx.stx_dio_offset_align != 0) {
    return stx.stx_dio_offset_align;
  }
  return 512;
}

Result<int64_t> PosixBackend::Seek(int fd, int64_t offset, int whence) {
  off_t r = ::lseek(fd, offset, whence);
  if (r < 0) return Status::LastError("lseek");
  return static_cast<int64_t>(r);
}

Status PosixBackend::SetFlags(int fd, int flags) {
  return Check(::fcntl(fd, F_SETFL, flags) == -1 ? -1 : 0, "fcntl(F_SETFL)");
}

Result<DirPage> PosixBackend::ReadDir(int fd, uint64_t cookie, size_t max_entries) {
  int dup_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return Status::LastError("readdir");
  DIR* dir = ::fdopendir(dup_fd);
  if (dir == nullptr) {
    Status s = Status::LastError("readdir");
    ::close(dup_fd);
    return s;
  }
  if (cookie == 0) {
    ::rewinddir(dir);
  } else {
    ::seekdir(dir, static_cast<long>(cookie));
  }
  DirPage page;
  errno = 0;
  while (page.entries.size() < max_entries) {
    struct dirent* e = ::readdir(dir);
    if (e == nullptr) {
      page.done = errno == 0;
      break;
    }
    page.entries.push_back(DirEntryInfo{e->d_ino, e->d_type, e->d_name, std::nullopt});
  }
  Status s = errno != 0 ? Status::LastError("readdir") : Status::Ok();
  page.next_cookie = static_cast<uint64_t>(::telldir(dir));
  ::closedir(dir);
  if (!s.ok()) return s;
  return page;
}

Result<struct stat> PosixBackend::StatEntry(int dir_fd, const std::string& name) {
  // One component from a listing, never followed: nothing to confine beyond the directory.
  if (name.empty() || name.find('/') != std::string::npos) {
    return Status::FromErrno(EINVAL, "not an entry name");
  }
  struct stat st;
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return Status::LastError("fstatat");
  }
  return st;
}

Result<struct stat> PosixBackend::Stat(int root_fd, const std::string& rel, bool nofollow) {
  struct stat st;
  // A trailing slash follows a last symbolic link, even for lstat, as the kernel's walk does.
  if (nofollow && (rel.empty() || rel.back() != '/')) {
    Result<ParentRef> parent = OpenParentBeneath(root_fd, rel);
    if (!parent.ok()) return parent.status();
    FdGuard guard(parent->fd);
    if (::fstatat(guard.get(), parent->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return Status::LastError("lstat");
    }
    return st;
  }
  Result<int> fd = OpenBeneath(root_fd, rel, O_PATH, 0);
  if (!fd.ok()) return fd.status();
  FdGuard guard(*fd);
  if (::fstat(guard.get(), &st) != 0) return Status::LastError("stat");
  return st;
}

Result<struct statfs> PosixBackend::Statfs(int root_fd, const std::string& rel) {
  Result<int> fd = OpenBeneath(root_fd, rel, O_PATH, 0);
  if (!fd.ok()) return fd.status();
  FdGuard guard(*fd);
  struct statfs st;
  if (::fstatfs(guard.get(), &st) != 0) return Status::LastError("statfs");
  return st;
}

Status PosixBackend::Access(int root_fd, const std::string& rel, int mode) {
  Result<int> fd = OpenBeneath(root_fd, rel, O_PATH, 0);
  if (!fd.ok()) return fd.status();
  FdGuard guard(*fd);
  return Check(::faccessat(guard.get(), "", mode, AT_EMPTY_PATH), "access");
}

Status PosixBackend::Unlink(int root_fd, const std::string& rel) {
  Result<ParentRef> parent = OpenParentBeneath(root_fd, rel);
  if (!parent.ok()) return parent.status();
  FdGuard guard(parent->fd);
  if (parent->is_self) return Status::FromErrno(EISDIR, "unlink of a directory");
  return Check(::unlinkat(guard.get(), parent->name.c_str(), 0), "unlink");
}

Status PosixBackend::Mkdir(int root_fd, const std::string& rel, mode_t mode) {
  Result<ParentRef> parent = OpenParentBeneath(root_fd, rel);
  if (!parent.ok()) return parent.status();
  FdGuard guard(parent->fd);
  if (parent->is_self) return Status::FromErrno(EEXIST, "mkdir");
  ExactCreationModes();
  return Check(::mkdirat(guard.get(), parent->name.c_str(), mode), "mkdir");
}

Status PosixBackend::Rmdir(int root_fd, const std::string& rel) {
  Result<ParentRef> parent = OpenParentBeneath(root_fd, rel);
  if (!parent.ok()) return parent.status();
  FdGuard guard(parent->fd);
  // rmdir of "." is EINVAL locally; the export root itself is refused the same way.
  if (parent->is_self) return Status::FromErrno(EINVAL, "rmdir of . or the export root");
  return Check(::unlinkat(guard.get(), parent->name.c_str(), AT_REMOVEDIR), "rmdir");
}

Status PosixBackend::Rename(int from_root_fd, const std::string& from, int to_root_fd,
                            const std::string& to, unsigned flags) {
  Result<ParentRef> src = OpenParentBeneath(from_root_fd, from);
  if (!src.ok()) return src.status();
  FdGuard src_guard(src->fd);
  Result<ParentRef> dst = OpenParentBeneath(to_root_fd, to);
  if (!dst.ok()) return dst.status();
  FdGuard dst_guard(dst->fd);
  if (src->is_self || dst->is_self) return Status::FromErrno(EBUSY, "rename of . or a root");
  return Check(
      ::renameat2(src_guard.get(), src->name.c_str(), dst_guard.get(), dst->name.c_str(), flags),
      "rename");
}

Status PosixBackend::Truncate(int root_fd, const std::string& rel, int64_t length) {
  Result<int> fd = OpenBeneath(root_fd, rel, O_WRONLY | O_NONBLOCK | O_NOCTTY, 0);
  if (!fd.ok()) return fd.status();
  FdGuard guard(*fd);
  return Check(::ftruncate(guard.get(), length), "truncate");
}

Status PosixBackend::Chmod(int root_fd, const std::string& rel, mode_t mode) {
  // The file as resolved beneath the root (O_PATH: no access needed), then chmod of that very
  // inode through /proc (fchmod refuses O_PATH descriptors).
  Result<int> fd = OpenBeneath(root_fd, rel, O_PATH, 0);
  if (!fd.ok()) return fd.status();
  FdGuard guard(*fd);
  return Check(::chmod(ProcFdPath(guard.get()).c_str(), mode), "chmod");
}

Status PosixBackend::Utimens(int root_fd, const std::string& rel, const struct timespec times[2],
                             bool nofollow) {
  if (nofollow && (rel.empty() || rel.back() != '/')) {  // (a trailing slash follows, as Stat)
    Result<ParentRef> parent = OpenParentBeneath(root_fd, rel);
    if (!parent.ok()) return parent.status();
    FdGuard guard(parent->fd);
    if (!parent->is_self) {
      return Check(::utimensat(guard.get(), parent->name.c_str(), times, AT_SYMLINK_NOFOLLOW),
                   "utimensat");
    }
    return Check(::utimensat(AT_FDCWD, ProcFdPath(guard.get()).c_str(), times, 0), "utimensat");
  }
  // As Chmod: the inode resolved beneath the root, through /proc (futimens refuses O_PATH).
  Result<int> fd = OpenBeneath(root_fd, rel, O_PATH, 0);
  if (!fd.ok()) return fd.status();
  FdGuard guard(*fd);
  return Check(::utimensat(AT_FDCWD, ProcFdPath(guard.get()).c_str(), times, 0), "utimensat");
}

Status PosixBackend::Symlink(const std::string& target, int root_fd, const std::string& rel) {
  IORELAY_RETURN_IF_ERROR(RefuseSlashedNewName(root_fd, rel));
  Result<ParentRef> parent = OpenParentBeneath(root_fd, rel);
  if (!parent.ok()) return parent.status();
  FdGuard guard(parent->fd);
  if (parent->is_self) return Status::FromErrno(EEXIST, "symlink over . or a root");
  return Check(::symlinkat(target.c_str(), guard.get(), parent->name.c_str()), "symlink");
}

Status PosixBackend::Link(int from_root_fd, const std::string& from, int to_root_fd,
                          const std::string& to, bool follow) {
  IORELAY_RETURN_IF_ERROR(RefuseSlashedNewName(to_root_fd, to));
  Result<ParentRef> dst = OpenParentBeneath(to_root_fd, to);
  if (!dst.ok()) return dst.status();
  FdGuard dst_guard(dst->fd);
  if (dst->is_self) return Status::FromErrno(EEXIST, "link over . or a root");
  if (follow) {
    // The file a final symbolic link names, resolved beneath the root, then linked through
    // /proc (AT_SYMLINK_FOLLOW on the magic link needs no capability, AT_EMPTY_PATH would).
    Result<int> fd = OpenBeneath(from_root_fd, from, O_PATH, 0);
    if (!fd.ok()) return fd.status();
    FdGuard guard(*fd);
    return Check(::linkat(AT_FDCWD, ProcFdPath(guard.get()).c_str(), dst_guard.get(),
                          dst->name.c_str(), AT_SYMLINK_FOLLOW),
                 "link");
  }
  Result<ParentRef> src = OpenParentBeneath(from_root_fd, from);
  if (!src.ok()) return src.status();
  FdGuard src_guard(src->fd);
  if (src->is_self) return Status::FromErrno(EPERM, "link of a directory");
  return Check(::linkat(src_guard.get(), src->name.c_str(), dst_guard.get(), dst->name.c_str(), 0),
               "link");
}

Result<std::string> PosixBackend::Readlink(int root_fd, const std::string& rel) {
  Result<ParentRef> parent = OpenParentBeneath(root_fd, rel);
  if (!parent.ok()) return parent.status();
  FdGuard guard(parent->fd);
  if (parent->is_self) return Status::FromErrno(EINVAL, "readlink of a directory");
  char buf[4096];
  ssize_t n = ::readlinkat(guard.get(), parent->name.c_str(), buf, sizeof buf);
  if (n < 0) return Status::LastError("readlink");
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace iorelay::backend
