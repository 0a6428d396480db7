#include "preload/exec_forwarded.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "preload/libc_next.h"
#include "preload/path_resolve.h"
#include "preload/state.h"

namespace iorelay::preload {
namespace {

// The kernel runs at most this many interpreters of interpreters (BINPRM_MAX_RECURSION).
constexpr int kMaxInterpreters = 4;
// The kernel reads a script's "#!" line from its first 256 bytes.
constexpr size_t kShebangBytes = 256;

constexpr unsigned kMemfdExec = 0x10;  // MFD_EXEC (Linux 6.3), not in this libc's headers

// What the kernel is given in place of a program on a forwarded path: a local path, or a memfd
// holding a copy of the program (closed with this), and the arguments to pass it.
struct Prepared {
  std::string path;
  int copy = -1;
  std::string library_dir;        // the copy's forwarded shared objects, staged (LD_LIBRARY_PATH)
  std::vector<std::string> args;  // a script's interpreter's; empty: the caller's argv stands
  Prepared() = default;
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;
  ~Prepared() {
    if (copy >= 0) ::close(copy);
  }
  // The environment to exec with: `envp`, with library_dir first in LD_LIBRARY_PATH (the new
  // image's loader opens its libraries itself, before any interposer runs). Keeps the strings
  // in *keep.
  std::vector<char*> Envp(char* const envp[], std::vector<std::string>* keep) const {
    std::vector<char*> out;
    std::string old;
    for (int i = 0; envp != nullptr && envp[i] != nullptr; ++i) {
      if (!library_dir.empty() && strncmp(envp[i], "LD_LIBRARY_PATH=", 16) == 0) {
        old = envp[i] + 16;
      } else {
        out.push_back(envp[i]);
      }
    }
    if (!library_dir.empty()) {
      keep->push_back("LD_LIBRARY_PATH=" + library_dir + (old.empty() ? "" : ":" + old));
      out.push_back(keep->back().data());
    }
    out.push_back(nullptr);
    return out;
  }
  // The argv to exec with: the caller's, or the one made for a script's interpreter.
  std::vector<char*> Argv(char* const argv[]) {
    std::vector<char*> out;
    if (args.empty()) {
      for (int i = 0; argv != nullptr && argv[i] != nullptr; ++i) out.push_back(argv[i]);
    } else {
      for (std::string& a : args) out.push_back(a.data());
    }
    out.push_back(nullptr);
    return out;
  }
};

// A script's "#!interpreter [argument]" line, read as the kernel reads it: blanks after "#!"
// skipped, the interpreter up to the next blank, the rest of the line trimmed into one
// argument. False when `head` is not a script.
bool ParseShebang(const char* head, size_t n, std::string* interp, std::string* arg) {
  if (n < 2 || head[0] != '#' || head[1] != '!') return false;
  std::string line(head + 2, n - 2);
  line.resize(std::min(line.find('\n'), line.size()));
  const char* blanks = " \t";
  const size_t start = line.find_first_not_of(blanks);
  if (start == std::string::npos) return true;  // no interpreter: ENOEXEC
  const size_t end = std::min(line.find_first_of(blanks, start), line.size());
  *interp = line.substr(start, end - start);
  const size_t arg_start = line.find_first_not_of(blanks, end);
  if (arg_start != std::string::npos) {
    *arg = line.substr(arg_start, line.find_last_not_of(blanks) + 1 - arg_start);
  }
  return true;
}

// A memfd holding the whole of `f`; -errno.
int CopyToMemfd(iorelay_file* f, const char* name) {
  // (memfd_create refuses names of more than 249 bytes)
  const std::string label = std::string(name).substr(0, 240);
  // Executable by name where the kernel can make memfds that are not (vm.memfd_noexec, Linux
  // 6.3 on); older kernels refuse the flag.
  int copy = ::memfd_create(label.c_str(), MFD_CLOEXEC | kMemfdExec);
  if (copy < 0 && errno == EINVAL) copy = ::memfd_create(label.c_str(), MFD_CLOEXEC);
  if (copy < 0) return -errno;
  if (const int rc = CopyForwardedFile(f, copy); rc < 0) {
    ::close(copy);
    return rc;
  }
  return copy;
}

// What the kernel is to run for `path` (as the caller named it) with `argv`: 0 or -errno. A
// path that is not forwarded is the kernel's as it is; a forwarded program is resolved through
// the daemon's links, checked as the kernel checks it (a regular file, executable), and is a
// script's interpreter (prepared in turn) or a copy in a memfd.
int Prepare(const char* path, char* const argv[], int depth, Prepared* out) {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) {
    out->path = LibcPath(path, abs);
    return 0;
  }
  char canonical[PATH_MAX];
  const int n = CanonicalForwarded(abs.c_str(), canonical, sizeof canonical);
  if (n < 0) return n;
  if (n == kLeftTheTree) return Prepare(canonical, argv, depth, out);  // a link out: the kernel's
  struct stat st;
  int rc = iorelay_stat(g_client, canonical, &st, 0);
  if (rc == 0 && !S_ISREG(st.st_mode)) rc = -EACCES;
  if (rc == 0) rc = iorelay_access(g_client, canonical, X_OK);
  iorelay_file* f = nullptr;
  if (rc == 0) rc = iorelay_open(g_client, canonical, O_RDONLY, 0, &f);
  if (rc < 0) return rc;
  char head[kShebangBytes];
  const ssize_t got = iorelay_pread(f, head, sizeof head, 0);
  std::string interp, arg;
  const bool script = got >= 0 && ParseShebang(head, static_cast<size_t>(got), &interp, &arg);
  if (got >= 0 && !script) {
    const char* base = strrchr(canonical, '/');
    out->copy = CopyToMemfd(f, base != nullptr ? base + 1 : canonical);
    if (out->copy >= 0 && base != nullptr) {
      out->library_dir = StageProgramLibraries(
          out->copy, std::string(canonical, static_cast<size_t>(base - canonical)));
    }
  }
  iorelay_close(f);
  if (got < 0) return static_cast<int>(got);
  if (!script) return out->copy < 0 ? out->copy : 0;
  if (interp.empty()) return -ENOEXEC;
  if (depth >= kMaxInterpreters) return -ELOOP;
  // The interpreter gets the script's path as the caller gave it (so $0 names it), then the
  // caller's arguments after the first.
  std::vector<std::string> args = {interp};
  if (!arg.empty()) args.push_back(arg);
  args.push_back(path);
  for (int i = 1; argv != nullptr && argv[0] != nullptr && argv[i] != nullptr; ++i) {
    args.push_back(argv[i]);
  }
  std::vector<char*> next;
  for (std::string& a : args) next.push_back(a.data());
  next.push_back(nullptr);
  rc = Prepare(interp.c_str(), next.data(), depth + 1, out);
  if (rc == 0 && out->args.empty()) out->args = std::move(args);  // (else the interpreter's own)
  return rc;
}

int Exec(const char* path, char* const argv[], char* const envp[]) {
  if (path == nullptr) return REAL(execve)(path, argv, envp);
  Prepared p;
  if (int rc = Prepare(path, argv, 0, &p); rc < 0) return Fail(-rc);
  std::vector<char*> args = p.Argv(argv);
  std::vector<std::string> keep;
  std::vector<char*> env = p.Envp(envp, &keep);
  if (p.copy >= 0) {
    ::syscall(SYS_execveat, p.copy, "", args.data(), env.data(), AT_EMPTY_PATH);
    return -1;
  }
  return REAL(execve)(p.path.c_str(), args.data(), env.data());
}

// One candidate of a PATH search: a file the kernel cannot run as it is (ENOEXEC) is run by
// the shell, as libc's execvp does.
int ExecCandidate(const char* path, char* const argv[], char* const envp[]) {
  Exec(path, argv, envp);
  if (errno != ENOEXEC) return -1;
  std::vector<char*> args = {const_cast<char*>("/bin/sh"), const_cast<char*>(path)};
  for (int i = 1; argv != nullptr && argv[0] != nullptr && argv[i] != nullptr; ++i) {
    args.push_back(argv[i]);
  }
  args.push_back(nullptr);
  return Exec("/bin/sh", args.data(), envp);
}

// libc's PATH search, where entries may be forwarded: `attempt` each candidate (it gives 0 when
// done, else an errno) as libc does: on to the next after ENOENT-like errors, EACCES remembered.
// False, with nothing attempted, when no entry is forwarded (libc's own search then serves).
bool SearchPath(const char* file, const std::function<int(const char*)>& attempt, int* error) {
  const char* search = getenv("PATH");
  const std::string path = search != nullptr ? search : "/bin:/usr/bin";
  std::vector<std::string> dirs;
  bool forwarded = false;
  for (size_t at = 0;;) {
    const size_t colon = std::min(path.find(':', at), path.size());
    dirs.push_back(colon > at ? path.substr(at, colon - at) : ".");
    AbsPath abs;
    forwarded = forwarded || ForwardedPath(AT_FDCWD, dirs.back().c_str(), &abs);
    if (colon == path.size()) break;
    at = colon + 1;
  }
  if (!forwarded) return false;
  bool denied = false;
  for (const std::string& dir : dirs) {
    const std::string candidate = dir + "/" + file;
    const int e = attempt(candidate.c_str());
    if (e == EACCES) {
      denied = true;
    } else if (e != ENOENT && e != ENOTDIR && e != ESTALE && e != ENODEV && e != ETIMEDOUT) {
      *error = e;
      return true;
    }
  }
  *error = denied ? EACCES : ENOENT;
  return true;
}

}  // namespace

int ExecvePath(const char* path, char* const argv[], char* const envp[]) {
  return Exec(path, argv, envp);
}

int ExecvpePath(const char* file, char* const argv[], char* const envp[]) {
  if (file == nullptr || *file == '\0') return Fail(ENOENT);
  if (strchr(file, '/') != nullptr) return ExecCandidate(file, argv, envp);
  int e = 0;
  const auto attempt = [&](const char* candidate) {
    ExecCandidate(candidate, argv, envp);
    return errno;
  };
  if (!SearchPath(file, attempt, &e)) return REAL(execvpe)(file, argv, envp);
  return Fail(e);
}

int ExecveForwardedFd(int fd, char* const argv[], char* const envp[]) {
  std::string path;
  {
    FdTable::Ref e = g_table.Acquire(fd);
    if (!e) return Fail(EBADF);
    path = e->path;
  }
  return Exec(path.c_str(), argv, envp);
}

int SpawnPath(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
              const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  if (path == nullptr) return EFAULT;
  Prepared p;
  if (int rc = Prepare(path, argv, 0, &p); rc < 0) return -rc;
  std::vector<char*> args = p.Argv(argv);
  // The child runs the copy by the path of this process's descriptor (which the file actions,
  // run in the child's own table, cannot close or replace); glibc's spawn returns once the
  // child has exec'd, so the copy may be closed then.
  const std::string run =
      p.copy >= 0 ? "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(p.copy) : p.path;
  std::vector<std::string> keep;
  std::vector<char*> env = p.Envp(envp, &keep);
  return REAL(posix_spawn)(pid, run.c_str(), actions, attr, args.data(), env.data());
}

int SpawnpPath(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
               const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  if (file == nullptr || *file == '\0') return ENOENT;
  if (strchr(file, '/') != nullptr) return SpawnPath(pid, file, actions, attr, argv, envp);
  // A local candidate is looked at here, before a child is made: the file actions run once,
  // for the candidate that is spawned (a forwarded one is prepared here as well).
  int e = 0;
  const auto attempt = [&](const char* candidate) {
    AbsPath abs;
    if (!ForwardedPath(AT_FDCWD, candidate, &abs) &&
        REAL(faccessat)(AT_FDCWD, LibcPath(candidate, abs), X_OK, AT_EACCESS) != 0) {
      return errno;
    }
    return SpawnPath(pid, candidate, actions, attr, argv, envp);
  };
  if (!SearchPath(file, attempt, &e))
    return REAL(posix_spawnp)(pid, file, actions, attr, argv, envp);
  return e;
}

}  // namespace iorelay::preload
