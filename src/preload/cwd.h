// The working directory when it is a forwarded one: the kernel cannot enter a directory that
// exists only behind the daemon, so the interposer keeps it (chdir, fchdir, getcwd) and
// resolves AT_FDCWD-relative paths against it, while the kernel's working directory is the
// process's gone directory (fd_ops.h), in which calls that bypass the interposer find nothing.
#pragma once

#include <cstddef>

namespace iorelay::preload {

// The environment variable that hands the forwarded working directory to an exec'd image.
inline constexpr const char* kCwdEnv = "IORELAY_CWD";

// Copies the forwarded working directory into `out` (absolute, normalised, no trailing slash
// but for "/"); false when the working directory is the kernel's, or it does not fit.
bool ForwardedCwd(char* out, size_t size);
// Sets it (the kernel's must then be the gone directory), or clears it.
void SetForwardedCwd(const char* abs_path);
void ClearForwardedCwd();

// Held across fork (state.cc), so that the child's copy is whole.
void LockCwdForFork();
void UnlockCwdAfterFork();

// At start: the working directory an exec handed down (kCwdEnv), then removed from environ.
void RestoreForwardedCwd();

}  // namespace iorelay::preload
