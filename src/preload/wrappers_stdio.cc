// stdio on forwarded files: glibc's FILE calls its internal read/write, which no
// interposer sees, so a FILE* over a forwarded descriptor is a fopencookie FILE whose
// callbacks go through the wrappers.
#include <stdio.h>
#include <string.h>

#include <new>

#include "preload/fd_ops.h"
#include "preload/libc_next.h"
#include "preload/ptr_registry.h"
#include "preload/state.h"
#include "preload/std_streams.h"

using namespace iorelay::preload;

namespace {

struct StdioCookie {
  int fd = -1;
  FILE* stream = nullptr;
};

// fopen's mode → open flags; -1 if invalid.
int ModeToFlags(const char* mode) {
  int flags;
  switch (mode[0]) {
    case 'r':
      flags = O_RDONLY;
      break;
    case 'w':
      flags = O_WRONLY | O_CREAT | O_TRUNC;
      break;
    case 'a':
      flags = O_WRONLY | O_CREAT | O_APPEND;
      break;
    default:
      return -1;
  }
  for (const char* m = mode + 1; *m != '\0' && *m != ','; ++m) {
    if (*m == '+') flags = (flags & ~O_ACCMODE) | O_RDWR;
    if (*m == 'x') flags |= O_EXCL;
    if (*m == 'e') flags |= O_CLOEXEC;
  }
  return flags;
}

ssize_t CookieRead(void* c, char* buf, size_t n) {
  return read(static_cast<StdioCookie*>(c)->fd, buf, n);
}

ssize_t CookieWrite(void* c, const char* buf, size_t n) {
  ssize_t rc = write(static_cast<StdioCookie*>(c)->fd, buf, n);
  return rc < 0 ? 0 : rc;  // fopencookie: 0 (with errno) on error
}

int CookieSeek(void* c, off64_t* pos, int whence) {
  off64_t rc = lseek64(static_cast<StdioCookie*>(c)->fd, *pos, whence);
  if (rc < 0) return -1;
  *pos = rc;
  return 0;
}

int CookieClose(void* c) {
  auto* cookie = static_cast<StdioCookie*>(c);
  g_files.Erase(cookie->stream);
  int rc = close(cookie->fd);
  delete cookie;
  return rc;
}

// A FILE over fd (which it then owns); null with errno on failure (fd untouched).
FILE* MakeCookieFile(int fd, const char* mode) {
  auto* cookie = new (std::nothrow) StdioCookie;
  if (cookie == nullptr) return (errno = ENOMEM, nullptr);
  cookie->fd = fd;
  cookie_io_functions_t io = {&CookieRead, &CookieWrite, &CookieSeek, &CookieClose};
  FILE* f = fopencookie(cookie, mode, io);
  if (f == nullptr) {
    delete cookie;
    return nullptr;
  }
  cookie->stream = f;
  g_files.Add(f, cookie);
  return f;
}

// A stream that only appends ("a", not "a+") starts at the end, so that ftell says where its
// first write lands, as glibc's own streams do.
bool AppendOnly(int flags) { return (flags & O_APPEND) != 0 && (flags & O_ACCMODE) == O_WRONLY; }

FILE* FopenForwarded(const char* abs, const char* mode) {
  int flags = ModeToFlags(mode);
  if (flags < 0) return (errno = EINVAL, nullptr);
  int fd = OpenForwarded(abs, flags, 0666);
  if (fd < 0) return nullptr;
  if (AppendOnly(flags)) (void)lseek64(fd, 0, SEEK_END);
  FILE* f = MakeCookieFile(fd, mode);
  if (f == nullptr) {
    int saved = errno;
    CloseForwarded(fd);
    errno = saved;
  }
  return f;
}

FILE** StdStreamVar(int fd) {
  switch (fd) {
    case 0:
      return &stdin;
    case 1:
      return &stdout;
    case 2:
      return &stderr;
    default:
      return nullptr;
  }
}

// freopen(path, mode, stdout) onto a forwarded path: the descriptor number stays
// (what the application expects of freopen on a standard stream) and the variable
// stdout now names a cookie FILE on it.
FILE* ReopenStdStream(FILE* stream, int std_fd, const char* path, const char* mode) {
  int flags = ModeToFlags(mode);
  if (flags < 0) return (errno = EINVAL, nullptr);
  fflush(stream);
  int fd = open(path, flags, 0666);
  if (fd < 0) return nullptr;
  if (fd != std_fd) {
    if (dup2(fd, std_fd) < 0) {
      int saved = errno;
      close(fd);
      return (errno = saved, nullptr);
    }
    close(fd);
  }
  AdoptStdStream(std_fd);
  return *StdStreamVar(std_fd);
}

// freopen on one of the interposer's FILEs: the cookie takes the new descriptor.
FILE* ReopenCookie(StdioCookie* cookie, const char* path, const char* mode) {
  fflush(cookie->stream);
  clearerr(cookie->stream);
  if (path == nullptr) return cookie->stream;  // mode change only: nothing to do
  int flags = ModeToFlags(mode);
  if (flags < 0) return (errno = EINVAL, nullptr);
  int fd = open(path, flags, 0666);
  if (fd < 0) return nullptr;
  close(cookie->fd);
  cookie->fd = fd;
  return cookie->stream;
}

FILE* Freopen(const char* path, const char* mode, FILE* stream, bool is64) {
  if (auto* cookie = static_cast<StdioCookie*>(g_files.Find(stream))) {
    return ReopenCookie(cookie, path, mode);
  }
  AbsPath abs;
  if (path != nullptr && ForwardedPath(AT_FDCWD, path, &abs)) {
    for (int fd = 0; fd <= 2; ++fd) {
      if (stream == *StdStreamVar(fd)) return ReopenStdStream(stream, fd, path, mode);
    }
    // Any other libc FILE cannot become a cookie FILE in place (docs/interposer.md).
    errno = ENOTSUP;
    return nullptr;
  }
  return is64 ? REAL(freopen64)(path, mode, stream) : REAL(freopen)(path, mode, stream);
}

}  // namespace

namespace iorelay::preload {

void FlushStdStream(int fd) {
  FILE** var = StdStreamVar(fd);
  if (var != nullptr && *var != nullptr) fflush(*var);
}

void AdoptStdStream(int fd) {
  FILE** var = StdStreamVar(fd);
  if (var == nullptr || !IsForwardedFd(fd)) return;
  if (auto* cookie = static_cast<StdioCookie*>(g_files.Find(*var)); cookie && cookie->fd == fd) {
    return;
  }
  FILE* f = MakeCookieFile(fd, fd == 0 ? "r" : "w");
  if (f == nullptr) return;
  if (fd == 2) setvbuf(f, nullptr, _IONBF, 0);
  *var = f;  // glibc's stdio reads the variables stdin/stdout/stderr at each use
}

}  // namespace iorelay::preload

extern "C" {

IORELAY_EXPORT FILE* fopen(const char* path, const char* mode) {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(fopen)(LibcPath(path, abs), mode);
  FILE* f = FopenForwarded(abs.c_str(), mode);
  if (f == nullptr && LeadsOutOfTheTree(errno, abs.c_str(), true, &abs)) {
    return REAL(fopen)(abs.c_str(), mode);  // a link out of the tree: libc opens its target
  }
  return f;
}

IORELAY_EXPORT FILE* fopen64(const char* path, const char* mode) {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(fopen64)(LibcPath(path, abs), mode);
  FILE* f = FopenForwarded(abs.c_str(), mode);
  if (f == nullptr && LeadsOutOfTheTree(errno, abs.c_str(), true, &abs)) {
    return REAL(fopen64)(abs.c_str(), mode);  // a link out of the tree: libc opens its target
  }
  return f;
}

IORELAY_EXPORT FILE* fdopen(int fd, const char* mode) noexcept {
  if (!IsForwardedFd(fd)) return REAL(fdopen)(fd, mode);
  const int want = ModeToFlags(mode);
  if (want < 0) return (errno = EINVAL, nullptr);
  // As glibc's fdopen: the descriptor must allow the mode's access, and an "a" mode gives it
  // O_APPEND (an append-only stream then starts at the end).
  const int have = fcntl(fd, F_GETFL);
  if (have < 0) return nullptr;
  if ((have & O_ACCMODE) != O_RDWR && (have & O_ACCMODE) != (want & O_ACCMODE)) {
    return (errno = EINVAL, nullptr);
  }
  if ((want & O_APPEND) != 0 && (have & O_APPEND) == 0) {
    if (fcntl(fd, F_SETFL, have | O_APPEND) != 0) return nullptr;
    if (AppendOnly(want)) (void)lseek64(fd, 0, SEEK_END);
  }
  return MakeCookieFile(fd, mode);
}

IORELAY_EXPORT FILE* freopen(const char* path, const char* mode, FILE* stream) {
  return Freopen(path, mode, stream, false);
}

IORELAY_EXPORT FILE* freopen64(const char* path, const char* mode, FILE* stream) {
  return Freopen(path, mode, stream, true);
}

// glibc reports -1 for a cookie FILE; the interposer knows its descriptor.
IORELAY_EXPORT int fileno(FILE* stream) noexcept {
  if (auto* cookie = static_cast<StdioCookie*>(g_files.Find(stream))) return cookie->fd;
  return REAL(fileno)(stream);
}

IORELAY_EXPORT int fileno_unlocked(FILE* stream) noexcept {
  if (auto* cookie = static_cast<StdioCookie*>(g_files.Find(stream))) return cookie->fd;
  return REAL(fileno_unlocked)(stream);
}

}  // extern "C"
