// Forwarded-descriptor life cycle: placeholder, entry, duplicate, close.
#include "preload/fd_ops.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "client/internal_fds.h"
#include "common/raw_close.h"
#include "preload/state.h"
#include "preload/std_streams.h"

namespace iorelay::preload {

namespace {

// An O_PATH descriptor of a directory of our own, removed as soon as it is open: calls that the
// interposer does not wrap and that take a placeholder as a directory (symlinkat, mknodat,
// openat2, fchdir, ...) then find nothing in it and can create nothing (ENOENT) instead of acting
// on a real directory. Made with raw system calls (a forwarded /tmp must not see it); where no
// temporary directory is writable, /proc/self/fdinfo, in which nothing can be created either.
int MakeGoneDirectory() {
  const char* bases[] = {getenv("TMPDIR"), "/tmp", "/dev/shm", "/var/tmp"};
  char path[4096];
  for (const char* base : bases) {
    if (base == nullptr || base[0] != '/') continue;
    for (unsigned attempt = 0; attempt < 8; ++attempt) {
      int n = snprintf(path, sizeof path, "%s/.iorelay-placeholder-%d-%u", base,
                       static_cast<int>(getpid()), attempt);
      if (n < 0 || static_cast<size_t>(n) >= sizeof path) break;
      if (syscall(SYS_mkdirat, AT_FDCWD, path, 0) != 0) {
        if (errno == EEXIST) continue;
        break;
      }
      long fd = syscall(SYS_openat, AT_FDCWD, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
      syscall(SYS_unlinkat, AT_FDCWD, path, AT_REMOVEDIR);
      if (fd >= 0) return static_cast<int>(fd);
    }
  }
  return static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, "/proc/self/fdinfo", O_PATH | O_DIRECTORY | O_CLOEXEC));
}

}  // namespace

int GoneDirectory() {
  static const int fd = [] {
    int made = MakeGoneDirectory();
    return made < 0 ? made : client::AdoptInternalFd(made);
  }();
  return fd;
}

int ReservePlaceholder(bool cloexec) {
  const int gone = GoneDirectory();
  if (gone < 0) return -EMFILE;
  long fd = syscall(SYS_fcntl, gone, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
  if (fd < 0) return -errno;
  if (static_cast<size_t>(fd) >= g_table.capacity()) {
    RawClose(fd);
    return -EMFILE;
  }
  return static_cast<int>(fd);
}

void ClosePlaceholder(int fd) {
  int saved = errno;
  RawClose(fd);
  errno = saved;
}

int OpenForwarded(const char* abs_path, int flags, mode_t mode) {
  bool cloexec = (flags & O_CLOEXEC) != 0;
  int fd = ReservePlaceholder(cloexec);
  if (fd < 0) return Fail(-fd);
  auto* e = new (std::nothrow) FdEntry;
  if (e == nullptr) {
    ClosePlaceholder(fd);
    return Fail(ENOMEM);
  }
  e->path = abs_path;
  e->open_flags = flags & ~O_CLOEXEC;
  e->cloexec.store(cloexec, std::memory_order_relaxed);

  // (O_TMPFILE holds O_DIRECTORY's bit: it makes a file, in the directory the path names.)
  bool path_only =
      (flags & O_PATH) != 0 || ((flags & O_DIRECTORY) != 0 && (flags & O_TMPFILE) != O_TMPFILE);
  int rc = 0;
  struct stat st;
  bool st_known = false;
  if (!path_only) {
    rc = iorelay_open(g_client, abs_path, flags & ~O_CLOEXEC, CreationMode(mode), &e->file);
    // open(dir, O_RDONLY) is legal; the daemon may refuse it on a directory.
    if (rc == -EISDIR && (flags & O_ACCMODE) == O_RDONLY && !(flags & O_CREAT)) {
      path_only = true;
      rc = 0;
    }
    // Or it opened the directory (no O_DIRECTORY asked): a directory's descriptor is its path
    // here, as with O_DIRECTORY, so that fchdir, fdopendir and *at() take it as one. The open's
    // attributes answer the fstat without a round trip, and stand for the stat below.
    if (rc == 0 && !path_only && iorelay_fstat(e->file, &st) == 0 && S_ISDIR(st.st_mode)) {
      (void)iorelay_close(e->file);
      e->file = nullptr;
      path_only = st_known = true;
    }
  }
  if (rc == 0 && path_only) {
    if (!st_known) rc = iorelay_stat(g_client, abs_path, &st, (flags & O_NOFOLLOW) != 0);
    if (rc == 0 && (flags & O_DIRECTORY) && !S_ISDIR(st.st_mode)) rc = -ENOTDIR;
    if (rc == 0 && S_ISDIR(st.st_mode)) e->open_flags |= O_DIRECTORY;
    e->file = nullptr;
  }
  if (rc < 0) {
    delete e;
    ClosePlaceholder(fd);
    return Fail(-rc);
  }
  g_table.Release(g_table.Install(fd, e));
  if (fd <= 2) AdoptStdStream(fd);  // e.g. close(1); open("/fwd/job/log")
  return fd;
}

bool InstallDuplicate(int newfd, const FdEntry& src, bool cloexec) {
  auto* e = new (std::nothrow) FdEntry;
  if (e == nullptr) return false;
  e->file = src.file != nullptr ? iorelay_file_ref(src.file) : nullptr;
  e->path = src.path;
  e->open_flags = src.open_flags;
  e->cloexec.store(cloexec, std::memory_order_relaxed);
  e->dir_offset.store(src.dir_offset.load());  // (copied: the kernel's duplicates share it)
  g_table.Release(g_table.Install(newfd, e));
  return true;
}

int CloseForwarded(int fd) {
  FdEntry* e = g_table.Remove(fd);
  ClosePlaceholder(fd);
  int rc = g_table.Release(e);
  return rc < 0 ? Fail(-rc) : 0;
}

}  // namespace iorelay::preload
