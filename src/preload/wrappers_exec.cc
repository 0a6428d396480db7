// The exec family and posix_spawn: each passes an environment that describes the
// inherited forwarded descriptors (exec_env.h), so the new image can re-open them. The exec
// family and posix_spawn run programs on forwarded paths too (exec_forwarded.h).
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <unistd.h>

#include <vector>

#include "preload/exec_env.h"
#include "preload/exec_forwarded.h"
#include "preload/libc_next.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

// execl*'s argument list (up to the terminating null) as an argv array; for execle,
// *envp receives the pointer after the null.
std::vector<char*> CollectArgs(const char* arg0, va_list ap, char*** envp) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(arg0));
  if (arg0 != nullptr) {
    while (char* a = va_arg(ap, char*)) argv.push_back(a);
    argv.push_back(nullptr);
  }
  if (envp != nullptr) *envp = va_arg(ap, char**);
  return argv;
}

}  // namespace

extern "C" {

IORELAY_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) noexcept {
  ExecEnv env(envp);
  return ExecvePath(path, argv, env.get());
}

IORELAY_EXPORT int execv(const char* path, char* const argv[]) noexcept {
  ExecEnv env(environ);
  return ExecvePath(path, argv, env.get());
}

IORELAY_EXPORT int execvp(const char* file, char* const argv[]) noexcept {
  ExecEnv env(environ);
  return ExecvpePath(file, argv, env.get());
}

IORELAY_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) noexcept {
  ExecEnv env(envp);
  return ExecvpePath(file, argv, env.get());
}

IORELAY_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) noexcept {
  ExecEnv env(envp);
  if (IsForwardedFd(fd)) return ExecveForwardedFd(fd, argv, env.get());
  return REAL(fexecve)(fd, argv, env.get());
}

IORELAY_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[],
                            int flags) noexcept {
  ExecEnv env(envp);
  if (NullAnyway(path)) return REAL(execveat)(dirfd, path, argv, env.get(), flags);
  if ((flags & AT_EMPTY_PATH) != 0 && *path == '\0' && IsForwardedFd(dirfd)) {
    return ExecveForwardedFd(dirfd, argv, env.get());
  }
  AbsPath abs;
  if (ForwardedPath(dirfd, path, &abs)) return ExecvePath(abs.c_str(), argv, env.get());
  return REAL(execveat)(dirfd, LibcPath(path, abs), argv, env.get(), flags);
}

IORELAY_EXPORT int execl(const char* path, const char* arg, ...) noexcept {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = CollectArgs(arg, ap, nullptr);
  va_end(ap);
  return execv(path, argv.data());
}

IORELAY_EXPORT int execlp(const char* file, const char* arg, ...) noexcept {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = CollectArgs(arg, ap, nullptr);
  va_end(ap);
  return execvp(file, argv.data());
}

IORELAY_EXPORT int execle(const char* path, const char* arg, ...) noexcept {
  va_list ap;
  va_start(ap, arg);
  char** envp = nullptr;
  std::vector<char*> argv = CollectArgs(arg, ap, &envp);
  va_end(ap);
  return execve(path, argv.data(), envp);
}

IORELAY_EXPORT int posix_spawn(pid_t* pid, const char* path,
                               const posix_spawn_file_actions_t* actions,
                               const posix_spawnattr_t* attr, char* const argv[],
                               char* const envp[]) {
  ExecEnv env(envp);
  return SpawnPath(pid, path, actions, attr, argv, env.get());
}

IORELAY_EXPORT int posix_spawnp(pid_t* pid, const char* file,
                                const posix_spawn_file_actions_t* actions,
                                const posix_spawnattr_t* attr, char* const argv[],
                                char* const envp[]) {
  ExecEnv env(envp);
  return SpawnpPath(pid, file, actions, attr, argv, env.get());
}

}  // extern "C"
