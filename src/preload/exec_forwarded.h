// exec and posix_spawn of a program on a forwarded path, which the kernel cannot see: a
// script's interpreter is run with the script's path, as the kernel's binfmt_script does (the
// interpreter, running with the interposer, reads the script through the daemon); any other
// file is copied into a memfd, which the kernel then executes (execveat with AT_EMPTY_PATH, or
// its /proc/self/fd path for posix_spawn).
#pragma once

#include <spawn.h>

namespace iorelay::preload {

// execve(path, argv, envp) where `path` may be forwarded: returns only on failure (-1, errno).
// `envp` is already the exec environment (ExecEnv).
int ExecvePath(const char* path, char* const argv[], char* const envp[]);

// execvpe(file, argv, envp): a name without '/' is looked up in PATH, whose entries may be
// forwarded; returns only on failure (-1, errno).
int ExecvpePath(const char* file, char* const argv[], char* const envp[]);

// execve of the forwarded descriptor `fd`'s file (fexecve, execveat with AT_EMPTY_PATH).
int ExecveForwardedFd(int fd, char* const argv[], char* const envp[]);

// posix_spawn and posix_spawnp where the program may be forwarded: 0 or an error number.
int SpawnPath(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
              const posix_spawnattr_t* attr, char* const argv[], char* const envp[]);
int SpawnpPath(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
               const posix_spawnattr_t* attr, char* const argv[], char* const envp[]);

}  // namespace iorelay::preload
