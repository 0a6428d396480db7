// _exit and _Exit end the process without exit()'s destructors: the interposer sends
// write-behind's unsent writes first (a file another thread is using at that moment, as when a
// signal handler calls _exit, is left and named on stderr), then ends it as they do.
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/state.h"

using iorelay::preload::g_client;

extern "C" {

// As glibc declares them: _exit without noexcept, _Exit with it; the GNU attribute, because
// C++'s [[noreturn]] must be on a function's first declaration (clang enforces it).
__attribute__((noreturn)) IORELAY_EXPORT void _exit(int status) {
  if (g_client != nullptr) (void)iorelay_flush_nowait(g_client);
  for (;;) syscall(SYS_exit_group, status);
}

__attribute__((noreturn)) IORELAY_EXPORT void _Exit(int status) noexcept { _exit(status); }

}  // extern "C"
