// Runs one client call on the remote file behind a forwarded descriptor, holding a
// reference for the duration and converting the result to libc's convention.
#pragma once

#include <fcntl.h>

#include "preload/state.h"

namespace iorelay::preload {

// What the kernel answers a call on a directory's descriptor that needs a file's data: a read
// EISDIR; a write or an allocation EBADF (a directory is never open for writing); ftruncate
// EINVAL.
inline constexpr int kDirRead = EISDIR;
inline constexpr int kDirWrite = EBADF;
inline constexpr int kDirTruncate = EINVAL;

// op(iorelay_file*) returns a count or -errno. A directory's descriptor gives kDirErrno, an
// O_PATH one EBADF; a descriptor closed meanwhile gives EBADF.
template <class R, int kDirErrno = kDirRead, class Op>
R WithFile(int fd, Op&& op) {
  FdTable::Ref e = g_table.Acquire(fd);
  if (!e) return static_cast<R>(Fail(EBADF));
  if (e->file == nullptr) return static_cast<R>(Fail((e->open_flags & O_PATH) ? EBADF : kDirErrno));
  return FromClient<R>(static_cast<R>(op(e->file)));
}

// The same for calls that return an errno value instead of setting errno
// (posix_fallocate, posix_fadvise).
template <int kDirErrno = ENODEV, class Op>
int WithFileErrnoResult(int fd, Op&& op) {
  FdTable::Ref e = g_table.Acquire(fd);
  if (!e) return EBADF;
  if (e->file == nullptr) return (e->open_flags & O_PATH) ? EBADF : kDirErrno;
  int rc = static_cast<int>(op(e->file));
  return rc < 0 ? -rc : 0;
}

}  // namespace iorelay::preload
