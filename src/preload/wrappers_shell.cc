// system() and popen(): glibc's run the shell through its own spawn, which no exec wrapper
// sees, so the shell would start in the gone directory of a forwarded working directory, and
// the forwarded descriptors it should inherit would be placeholders. When there is something to
// hand over (ExecEnv differs from environ), the interposer runs "sh -c command" itself, through
// the exec wrappers, as POSIX describes these calls: system() with SIGCHLD blocked and SIGINT
// and SIGQUIT ignored in the caller while it waits (restored in the child), popen() with a
// pipe to the shell's standard input or output and the streams of earlier popen() calls closed
// in the child (glibc's and these); pclose() waits for the shell of a stream made so.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "preload/exec_env.h"
#include "preload/exec_forwarded.h"
#include "preload/libc_next.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

// SIGINT and SIGQUIT are ignored while any thread waits in system(), and restored when the
// last one is done (a thread's own save and restore would leave them ignored when two overlap).
iorelay::Mutex g_signals_mu;
int g_waiting GUARDED_BY(g_signals_mu) = 0;
struct sigaction g_saved_int, g_saved_quit;  // the caller's, while g_waiting > 0

void IgnoreInterrupts() {
  iorelay::MutexLock lock(g_signals_mu);
  if (g_waiting++ > 0) return;
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGINT, &ignore, &g_saved_int);
  sigaction(SIGQUIT, &ignore, &g_saved_quit);
}

void RestoreInterrupts() {
  iorelay::MutexLock lock(g_signals_mu);
  if (--g_waiting > 0) return;
  sigaction(SIGINT, &g_saved_int, nullptr);
  sigaction(SIGQUIT, &g_saved_quit, nullptr);
}

int RunShell(const char* command, char* const envp[]) {
  IgnoreInterrupts();
  sigset_t chld, old_mask;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &chld, &old_mask);
  const pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &g_saved_int, nullptr);  // (stable while this call counts in g_waiting)
    sigaction(SIGQUIT, &g_saved_quit, nullptr);
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
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
  RestoreInterrupts();
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = saved;
  return status;
}

// The streams popen() made, here (with their shells) or by glibc (pid -1: its own pclose()
// waits for those). Each list is closed in the children of the other's popen() only if it
// knows of it: glibc's children do not close ours, so while any of ours is open every popen()
// is made here, and ours close glibc's by this list.
struct Shell {
  pid_t pid;
  int fd;
};
iorelay::Mutex g_shells_mu;
std::unordered_map<FILE*, Shell>* g_shells GUARDED_BY(g_shells_mu) = nullptr;  // never freed
int g_own_shells GUARDED_BY(g_shells_mu) = 0;

void Remember(FILE* f, Shell shell) {
  iorelay::MutexLock lock(g_shells_mu);
  if (g_shells == nullptr) g_shells = new std::unordered_map<FILE*, Shell>;
  (*g_shells)[f] = shell;
  if (shell.pid > 0) ++g_own_shells;
}

bool OwnShellsOpen() {
  iorelay::MutexLock lock(g_shells_mu);
  return g_own_shells > 0;
}

FILE* OpenShell(const char* command, const char* mode, char* const envp[]) {
  const bool reads = mode[0] == 'r';
  const bool cloexec = strchr(mode, 'e') != nullptr;
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) return nullptr;
  const int mine = reads ? ends[0] : ends[1];
  const int its = reads ? ends[1] : ends[0];
  // POSIX: the streams of earlier popen() calls are closed in the child. The list is held
  // across the fork, so that no stream made meanwhile by another thread is missed; the child
  // never takes the lock.
  iorelay::MutexLock lock(g_shells_mu);
  std::vector<int> earlier;
  if (g_shells != nullptr) {
    for (const auto& [f, shell] : *g_shells) earlier.push_back(shell.fd);
  }
  const pid_t pid = fork();
  if (pid == 0) {
    for (int fd : earlier) close(fd);
    const int target = reads ? STDOUT_FILENO : STDIN_FILENO;
    if (its == target ? fcntl(its, F_SETFD, 0) != 0 : dup2(its, target) < 0) _exit(127);
    char* argv[] = {const_cast<char*>("sh"), const_cast<char*>("-c"), const_cast<char*>(command),
                    nullptr};
    ExecvePath("/bin/sh", argv, envp);
    _exit(127);
  }
  lock.Unlock();
  close(its);
  FILE* f = pid > 0 ? fdopen(mine, reads ? "r" : "w") : nullptr;
  if (f == nullptr) {
    const int saved = errno;
    close(mine);
    if (pid > 0) waitpid(pid, nullptr, 0);
    errno = saved;
    return nullptr;
  }
  if (!cloexec) fcntl(mine, F_SETFD, 0);
  Remember(f, Shell{pid, mine});
  return f;
}

}  // namespace

extern "C" {

IORELAY_EXPORT int system(const char* command) {
  if (command == nullptr) return REAL(system)(command);
  ExecEnv env(environ);
  if (env.get() == environ) return REAL(system)(command);  // nothing to hand over
  return RunShell(command, env.get());
}

IORELAY_EXPORT FILE* popen(const char* command, const char* mode) {
  if (command == nullptr || mode == nullptr || (mode[0] != 'r' && mode[0] != 'w') ||
      strspn(mode + 1, "e") != strlen(mode + 1)) {
    return REAL(popen)(command, mode);  // (glibc's answer to a bad mode: EINVAL)
  }
  ExecEnv env(environ);
  if (env.get() == environ && !OwnShellsOpen()) {  // nothing to hand over, nothing to close
    FILE* f = REAL(popen)(command, mode);
    if (f != nullptr) Remember(f, Shell{-1, fileno(f)});
    return f;
  }
  return OpenShell(command, mode, env.get());
}

IORELAY_EXPORT int pclose(FILE* stream) {
  Shell shell{-1, -1};
  {
    iorelay::MutexLock lock(g_shells_mu);
    if (g_shells != nullptr) {
      if (auto it = g_shells->find(stream); it != g_shells->end()) {
        shell = it->second;
        g_shells->erase(it);
        if (shell.pid > 0) --g_own_shells;
      }
    }
  }
  if (shell.pid < 0) return REAL(pclose)(stream);  // glibc's stream
  fclose(stream);
  int status = -1;
  while (waitpid(shell.pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

}  // extern "C"
