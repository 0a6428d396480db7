// The working directory when it is a forwarded one: the kernel cannot enter a directory that
// exists only behind the daemon, so the interposer keeps it (chdir, fchdir, getcwd) and
// resolves AT_FDCWD-relative paths against it, while the kernel's working directory is the
// process's gone directory (fd_ops.h), in which calls that bypass the interposer find nothing.
#pragma once

#include <cstddef>

#include "common/mutex.h"

namespace iorelay::preload {

// The environment variable that hands the forwarded working directory to an exec'd image.
inline constexpr const char* kCwdEnv = "IORELAY_CWD";

// Copies the forwarded working directory into `out` (absolute, normalised, no trailing slash
// but for "/"); false when the working directory is the kernel's, or it does not fit.
bool ForwardedCwd(char* out, size_t size);
// The lock under which a change of the working directory moves the kernel's and the record
// together (so that no thread and no forked child sees one without the other); ForwardedCwd
// takes it too, so resolve paths before taking it. Held across fork (state.cc).
extern iorelay::Mutex g_cwd_mu;
// With g_cwd_mu held: records a forwarded working directory (the kernel's must be the gone
// directory; false, nothing changed, if the path does not fit), or clears the record.
bool RecordForwardedCwd(const char* abs_path) REQUIRES(g_cwd_mu);
void ClearForwardedCwd() REQUIRES(g_cwd_mu);

void LockCwdForFork() ACQUIRE(g_cwd_mu);
void UnlockCwdAfterFork() RELEASE(g_cwd_mu);

// At start: the working directory an exec handed down (kCwdEnv), then removed from environ.
void RestoreForwardedCwd();

}  // namespace iorelay::preload
