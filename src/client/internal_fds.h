// The client's own descriptors (daemon sockets, direct-fallback files): kept at high numbers
// and recorded in a lock-free bitmap, so the interposer can protect them from the application.
#pragma once

#include "common/status.h"

namespace iorelay::client {

// Moves `fd` to a high number (F_DUPFD_CLOEXEC from max(1024, RLIMIT_NOFILE/2)), closes the
// original with a raw syscall and records the new one as internal. On failure to move, `fd`
// itself is kept (made close-on-exec) and recorded. Returns the descriptor to use.
int AdoptInternalFd(int fd);

// Moves an internal descriptor to another free high number; returns the new one or an error.
Result<int> RelocateInternalFd(int fd);

// Forgets and closes an internal descriptor (raw syscall; never the interposed close()).
void CloseInternalFd(int fd);

// Lock-free and async-signal-safe.
bool IsInternalFd(int fd);

}  // namespace iorelay::client
