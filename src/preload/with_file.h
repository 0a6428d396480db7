// Runs one client call on the remote file behind a forwarded descriptor, holding a
// reference for the duration and converting the result to libc's convention.
#pragma once

#include <fcntl.h>

#include "preload/state.h"

namespace iorelay::preload {

// op(iorelay_file*) returns a count or -errno. A directory or O_PATH descriptor gives
// EISDIR / EBADF; a descriptor closed meanwhile gives EBADF.
template <class R, class Op>
R WithFile(int fd, Op&& op) {
  FdTable::Ref e = g_table.Acquire(fd);
  if (!e) return static_cast<R>(Fail(EBADF));
  if (e->file == nullptr) return static_cast<R>(Fail((e->open_flags & O_PATH) ? EBADF : EISDIR));
  return FromClient<R>(static_cast<R>(op(e->file)));
}

// The same for calls that return an errno value instead of setting errno
// (posix_fallocate, posix_fadvise).
template <class Op>
int WithFileErrnoResult(int fd, Op&& op) {
  FdTable::Ref e = g_table.Acquire(fd);
  if (!e) return EBADF;
  if (e->file == nullptr) return (e->open_flags & O_PATH) ? EBADF : ENODEV;
  int rc = static_cast<int>(op(e->file));
  return rc < 0 ? -rc : 0;
}

}  // namespace iorelay::preload
