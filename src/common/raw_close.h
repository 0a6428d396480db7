// Closing a descriptor with the raw system call, out of reach of an interposed close().
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer's hook for a close it cannot intercept: without it, the next descriptor
// created on the same number in another thread is reported as a race with the first one.
extern "C" void __sanitizer_syscall_pre_impl_close(long fd);
#endif

namespace iorelay {

inline int RawClose(int fd) {
#if defined(__SANITIZE_THREAD__)
  __sanitizer_syscall_pre_impl_close(fd);
#endif
  return static_cast<int>(::syscall(SYS_close, fd));
}

}  // namespace iorelay
