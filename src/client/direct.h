// IORELAY_FALLBACK=direct: when a file's daemon is lost, the file is reopened in the real
// file system (IORELAY_DIRECT_ROOT maps the path) and served with raw syscalls.
#pragma once

#include <sys/uio.h>

#include "client/client.h"

namespace iorelay::client {

enum class IoKind { kPread, kPwrite, kRead, kWrite };

// True if the fallback is configured and the file could be switched (now or before).
bool SwitchToDirect(iorelay_file* f);

// Opens `path` directly for a new open while its daemon is unreachable; -errno on failure.
int OpenDirect(Client* c, const char* path, int flags, mode_t mode);

// Raw-syscall data transfer on a direct descriptor; count or -errno.
ssize_t DirectIo(int fd, IoKind kind, const struct iovec* iov, int iovcnt, off_t offset);

// Raw syscall returning -errno on failure.
long Sys(long r);

}  // namespace iorelay::client
