// system(): glibc's runs the shell through its own spawn, which no exec wrapper sees, so the
// shell would start in the gone directory of a forwarded working directory, and the forwarded
// descriptors it should inherit would be placeholders. When there is something to hand over
// (ExecEnv differs from environ), the interposer runs the shell itself, as POSIX describes
// system(): SIGCHLD blocked and SIGINT and SIGQUIT ignored in the caller while it waits, both
// restored in the child before it execs "sh -c command" through the exec wrappers.
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "preload/exec_env.h"
#include "preload/exec_forwarded.h"
#include "preload/libc_next.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

int RunShell(const char* command, char* const envp[]) {
  struct sigaction ignore = {}, old_int, old_quit;
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  sigset_t chld, old_mask;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &old_mask);
  const pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    char* argv[] = {const_cast<char*>("sh"), const_cast<char*>("-c"), const_cast<char*>(command),
                    nullptr};
    ExecvePath("/bin/sh", argv, envp);
    _exit(127);
  }
  int status = -1;
  if (pid > 0) {
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) {
        status = -1;
        break;
      }
    }
  }
  const int saved = errno;
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  errno = saved;
  return status;
}

}  // namespace

extern "C" {

IORELAY_EXPORT int system(const char* command) {
  if (command == nullptr) return REAL(system)(command);
  ExecEnv env(environ);
  if (env.get() == environ) return REAL(system)(command);  // nothing to hand over
  return RunShell(command, env.get());
}

}  // extern "C"
