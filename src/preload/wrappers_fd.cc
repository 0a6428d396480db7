// close, dup, dup2, dup3, close_range, closefrom: forwarded descriptors share their
// open file through the table, and the client's own sockets survive the application.
#include <dirent.h>
#include <linux/close_range.h>
#include <sys/syscall.h>

#include <algorithm>
#include <vector>

#include "common/raw_close.h"
#include "preload/fd_ops.h"
#include "preload/libc_next.h"
#include "preload/state.h"
#include "preload/std_streams.h"

using namespace iorelay::preload;

namespace {

bool IsInternal(int fd) { return g_client != nullptr && iorelay_is_internal_fd(g_client, fd); }

// dup2/dup3 core. `flags` is 0 or O_CLOEXEC.
int Dup3(int oldfd, int newfd, int flags) {
  if (IsInternal(newfd)) {
    int rc = iorelay_move_internal_fd(g_client, newfd);
    if (rc < 0) return Fail(-rc);
  }
  // A standard stream's buffered data belongs to the descriptor being replaced.
  if (newfd >= 0 && newfd <= 2) FlushStdStream(newfd);
  if (!IsForwardedFd(oldfd)) {
    if (!IsForwardedFd(newfd)) return REAL(dup3)(oldfd, newfd, flags);
    // A real descriptor replaces a forwarded one: libc's dup3 closes the placeholder.
    FdEntry* old_entry = g_table.Remove(newfd);
    int rc = REAL(dup3)(oldfd, newfd, flags);
    if (rc < 0) {
      g_table.Release(g_table.Install(newfd, old_entry));  // nothing happened
      return rc;
    }
    g_table.Release(old_entry);
    return rc;
  }
  FdTable::Ref src = g_table.Acquire(oldfd);
  if (!src) return REAL(dup3)(oldfd, newfd, flags);
  if (static_cast<size_t>(newfd) >= g_table.capacity()) return Fail(EBADF);
  int rc = REAL(dup3)(oldfd, newfd, flags);  // duplicates the placeholder
  if (rc < 0) return rc;
  if (!InstallDuplicate(newfd, *src, (flags & O_CLOEXEC) != 0)) {
    CloseForwarded(newfd);
    return Fail(ENOMEM);
  }
  if (newfd <= 2) AdoptStdStream(newfd);  // e.g. a shell's "cmd > /fwd/job/log"
  return newfd;
}

// The descriptors open in this process within [first, last], from /proc/self/fd
// read with raw system calls. False if /proc is unavailable.
bool OpenFdsInRange(unsigned first, unsigned last, std::vector<int>* out) {
  long dir = syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return false;
  alignas(8) char buf[4096];
  for (;;) {
    long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<struct dirent64*>(buf + off);
      off += d->d_reclen;
      if (d->d_name[0] < '0' || d->d_name[0] > '9') continue;
      long fd = strtol(d->d_name, nullptr, 10);
      if (fd != dir && fd >= first && fd <= last) out->push_back(static_cast<int>(fd));
    }
  }
  iorelay::RawClose(dir);
  std::sort(out->begin(), out->end());
  return true;
}

// close_range that spares the client's sockets and keeps the table in step.
int CloseRange(unsigned first, unsigned last, int flags) {
  if (first > last) return Fail(EINVAL);
  if (g_client == nullptr) return REAL(close_range)(first, last, flags);
  std::vector<int> internal;
  std::vector<int> open_fds;
  if (OpenFdsInRange(first, last, &open_fds)) {
    for (int fd : open_fds) {
      if (IsInternal(fd)) internal.push_back(fd);
    }
  }
  for (int fd : g_table.ListInRange(first, last)) {
    if (flags & CLOSE_RANGE_CLOEXEC) {
      FdTable::Ref e = g_table.Acquire(fd);
      if (e) e->cloexec.store(true, std::memory_order_relaxed);
    } else {
      g_table.Release(g_table.Remove(fd));  // the placeholder goes with the range
    }
  }
  // libc's close_range on the gaps between the internal descriptors.
  unsigned lo = first;
  int rc = 0;
  for (int fd : internal) {
    if (static_cast<unsigned>(fd) > lo && REAL(close_range)(lo, fd - 1, flags) != 0) rc = -1;
    lo = static_cast<unsigned>(fd) + 1;
  }
  if (lo <= last && (internal.empty() || internal.back() != static_cast<int>(last))) {
    if (REAL(close_range)(lo, last, flags) != 0) rc = -1;
  }
  return rc;
}

}  // namespace

extern "C" {

IORELAY_EXPORT int close(int fd) {
  if (IsForwardedFd(fd)) return CloseForwarded(fd);
  if (IsInternal(fd)) return 0;  // the client's socket: pretend, keep it
  return REAL(close)(fd);
}

IORELAY_EXPORT int dup(int oldfd) {
  if (!IsForwardedFd(oldfd)) return REAL(dup)(oldfd);
  FdTable::Ref src = g_table.Acquire(oldfd);
  if (!src) return REAL(dup)(oldfd);
  int fd = REAL(dup)(oldfd);
  if (fd < 0) return fd;
  if (static_cast<size_t>(fd) >= g_table.capacity() || !InstallDuplicate(fd, *src, false)) {
    ClosePlaceholder(fd);
    return Fail(EMFILE);
  }
  return fd;
}

IORELAY_EXPORT int dup2(int oldfd, int newfd) {
  if (oldfd == newfd) return REAL(dup2)(oldfd, newfd);
  if (g_client == nullptr) return REAL(dup2)(oldfd, newfd);
  return Dup3(oldfd, newfd, 0);
}

IORELAY_EXPORT int dup3(int oldfd, int newfd, int flags) {
  if (g_client == nullptr || oldfd == newfd) return REAL(dup3)(oldfd, newfd, flags);
  return Dup3(oldfd, newfd, flags);
}

IORELAY_EXPORT int close_range(unsigned first, unsigned last, int flags) noexcept {
  return CloseRange(first, last, flags);
}

IORELAY_EXPORT void closefrom(int lowfd) noexcept {
  if (lowfd < 0) lowfd = 0;
  int saved = errno;
  if (CloseRange(static_cast<unsigned>(lowfd), ~0U, 0) != 0 && errno == ENOSYS) {
    std::vector<int> open_fds;
    OpenFdsInRange(static_cast<unsigned>(lowfd), ~0U, &open_fds);
    for (int fd : open_fds) close(fd);
  }
  errno = saved;
}

}  // extern "C"
