#include "preload/exec_forwarded.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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

int Failed(int e) {
  errno = e;
  return -1;
}

int Exec(const char* path, char* const argv[], char* const envp[], int depth);

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

// Executes the file `f` (closed here) from a memfd holding a copy of it.
int ExecCopy(iorelay_file* f, const char* name, char* const argv[], char* const envp[]) {
  // (memfd_create refuses names of more than 249 bytes)
  const std::string label = std::string(name).substr(0, 240);
  const int copy = ::memfd_create(label.c_str(), MFD_CLOEXEC);
  if (copy < 0) {
    const int e = errno;
    iorelay_close(f);
    return Failed(e);
  }
  std::vector<char> buf(1 << 20);
  off_t off = 0;
  int error = 0;
  for (;;) {
    const ssize_t n = iorelay_pread(f, buf.data(), buf.size(), off);
    if (n <= 0) {
      error = static_cast<int>(-n);
      break;
    }
    for (ssize_t done = 0; done < n && error == 0;) {
      const ssize_t w = ::write(copy, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno != EINTR) error = errno;
      if (w > 0) done += w;
    }
    if (error != 0) break;
    off += n;
  }
  iorelay_close(f);
  if (error == 0) {
    ::syscall(SYS_execveat, copy, "", argv, envp, AT_EMPTY_PATH);
    error = errno;
  }
  ::close(copy);
  return Failed(error);
}

// Executes the forwarded file `abs`, which the caller named `given` (a script's interpreter
// gets that name, as from the kernel).
int ExecForwarded(const char* abs, const char* given, char* const argv[], char* const envp[],
                  int depth) {
  char canonical[PATH_MAX];
  const int n = CanonicalForwarded(abs, canonical, sizeof canonical);
  if (n < 0) return Failed(-n);
  if (n == kLeftTheTree) return Exec(canonical, argv, envp, depth);  // a link out: the kernel's
  struct stat st;
  int rc = iorelay_stat(g_client, canonical, &st, 0);
  if (rc == 0 && !S_ISREG(st.st_mode)) rc = -EACCES;
  if (rc == 0) rc = iorelay_access(g_client, canonical, X_OK);
  iorelay_file* f = nullptr;
  if (rc == 0) rc = iorelay_open(g_client, canonical, O_RDONLY, 0, &f);
  if (rc < 0) return Failed(-rc);
  char head[kShebangBytes];
  const ssize_t got = iorelay_pread(f, head, sizeof head, 0);
  if (got < 0) {
    iorelay_close(f);
    return Failed(static_cast<int>(-got));
  }
  std::string interp, arg;
  if (!ParseShebang(head, static_cast<size_t>(got), &interp, &arg)) {
    const char* base = strrchr(canonical, '/');
    return ExecCopy(f, base != nullptr ? base + 1 : canonical, argv, envp);
  }
  iorelay_close(f);
  if (interp.empty()) return Failed(ENOEXEC);
  if (depth >= kMaxInterpreters) return Failed(ELOOP);
  std::vector<char*> args = {interp.data()};
  if (!arg.empty()) args.push_back(arg.data());
  args.push_back(const_cast<char*>(given));
  for (int i = 1; argv != nullptr && argv[0] != nullptr && argv[i] != nullptr; ++i) {
    args.push_back(argv[i]);
  }
  args.push_back(nullptr);
  return Exec(interp.c_str(), args.data(), envp, depth + 1);
}

int Exec(const char* path, char* const argv[], char* const envp[], int depth) {
  AbsPath abs;
  if (path != nullptr && ForwardedPath(AT_FDCWD, path, &abs)) {
    return ExecForwarded(abs.c_str(), path, argv, envp, depth);
  }
  return REAL(execve)(path == nullptr ? path : LibcPath(path, abs), argv, envp);
}

// One candidate of a PATH search: a file the kernel cannot run as it is (ENOEXEC) is run by
// the shell, as libc's execvp does.
int ExecCandidate(const char* path, char* const argv[], char* const envp[]) {
  Exec(path, argv, envp, 0);
  if (errno != ENOEXEC) return -1;
  std::vector<char*> args = {const_cast<char*>("/bin/sh"), const_cast<char*>(path)};
  for (int i = 1; argv != nullptr && argv[0] != nullptr && argv[i] != nullptr; ++i) {
    args.push_back(argv[i]);
  }
  args.push_back(nullptr);
  return Exec("/bin/sh", args.data(), envp, 0);
}

}  // namespace

int ExecvePath(const char* path, char* const argv[], char* const envp[]) {
  return Exec(path, argv, envp, 0);
}

int ExecvpePath(const char* file, char* const argv[], char* const envp[]) {
  if (file == nullptr || *file == '\0') return Failed(ENOENT);
  if (strchr(file, '/') != nullptr) return ExecCandidate(file, argv, envp);
  const char* search = getenv("PATH");
  const std::string path = search != nullptr ? search : "/bin:/usr/bin";
  std::vector<std::string> dirs;
  bool forwarded = false;  // libc's own search calls the kernel's execve: used when none is
  for (size_t at = 0;;) {
    const size_t colon = std::min(path.find(':', at), path.size());
    dirs.push_back(colon > at ? path.substr(at, colon - at) : ".");
    AbsPath abs;
    forwarded = forwarded || ForwardedPath(AT_FDCWD, dirs.back().c_str(), &abs);
    if (colon == path.size()) break;
    at = colon + 1;
  }
  if (!forwarded) return REAL(execvpe)(file, argv, envp);
  bool denied = false;
  for (const std::string& dir : dirs) {
    const std::string candidate = dir + "/" + file;
    ExecCandidate(candidate.c_str(), argv, envp);
    if (errno == EACCES) {
      denied = true;
    } else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ENODEV &&
               errno != ETIMEDOUT) {
      return -1;
    }
  }
  return Failed(denied ? EACCES : ENOENT);
}

int ExecveForwardedFd(int fd, char* const argv[], char* const envp[]) {
  std::string path;
  {
    FdTable::Ref e = g_table.Acquire(fd);
    if (!e) return Failed(EBADF);
    path = e->path;
  }
  return ExecForwarded(path.c_str(), path.c_str(), argv, envp, 0);
}

}  // namespace iorelay::preload
