// Operations on forwarded descriptors that several wrapper files share: reserving the
// placeholder, opening, duplicating and closing.
#pragma once

#include <sys/types.h>

#include "preload/fd_table.h"

namespace iorelay::preload {

// Takes the lowest free descriptor with an O_PATH placeholder of a removed directory (so I/O
// that bypasses the interposer fails with EBADF, and a path relative to it finds nothing).
// Returns it, or -errno.
int ReservePlaceholder(bool cloexec);
// The process's gone directory (an O_PATH descriptor of a directory made and removed at once),
// made at first use and kept at a high internal number (inherited by fork; an exec'd image
// makes its own); -errno if none could be made.
int GoneDirectory();
// Closes a placeholder (or any descriptor) without the interposer's close rules.
void ClosePlaceholder(int fd);

// open() of a forwarded absolute path: a placeholder plus a table entry. Returns the
// descriptor, or -1 with errno.
int OpenForwarded(const char* abs_path, int flags, mode_t mode);

// Makes `newfd` (already holding a placeholder, e.g. from dup of one) a forwarded
// descriptor for the same open file as `src`. Releases whatever `newfd` held.
// False (nothing changed) when out of memory.
bool InstallDuplicate(int newfd, const FdEntry& src, bool cloexec);

// close() of a forwarded descriptor: drops the entry, then the placeholder. Returns
// 0, or -1 with errno from the last iorelay_close.
int CloseForwarded(int fd);

}  // namespace iorelay::preload
