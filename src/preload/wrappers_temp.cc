// mkstemp and its kin, mkdtemp: on a forwarded template they make the file (or directory)
// through the daemon. glibc's own make it with its internal open and mkdir, which no interposer
// sees, so a forwarded directory would answer ENOENT.
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

#include "preload/fd_ops.h"
#include "preload/libc_next.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

constexpr int kTries = 1000;
constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

// The six X's of `tmpl` before its last `suffix` characters, or null (EINVAL) when they are not
// there.
char* Xs(char* tmpl, int suffix) {
  const size_t n = strlen(tmpl);
  if (suffix < 0 || n < 6 + static_cast<size_t>(suffix)) return nullptr;
  char* x = tmpl + n - suffix - 6;
  return strncmp(x, "XXXXXX", 6) == 0 ? x : nullptr;
}

void FillXs(char* x, uint64_t* state) {
  for (int i = 0; i < 6; ++i) {
    *state ^= *state << 13;  // xorshift64
    *state ^= *state >> 7;
    *state ^= *state << 17;
    x[i] = kLetters[*state % (sizeof kLetters - 1)];
  }
}

uint64_t Seed(const void* where) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (static_cast<uint64_t>(ts.tv_nsec) << 20) ^ static_cast<uint64_t>(ts.tv_sec) ^
         (static_cast<uint64_t>(getpid()) << 40) ^ reinterpret_cast<uintptr_t>(where) ^ 1;
}

// Makes a new name of `tmpl` and creates it: a file opened O_RDWR | O_CREAT | O_EXCL | flags,
// mode 0600 (less the umask), returning its descriptor; or with `directory`, a directory of mode
// 0700, returning 0. -1 with errno (EEXIST after every try, EINVAL for a bad template).
int MakeForwardedTemp(char* tmpl, int suffix, int flags, bool directory) {
  char* x = Xs(tmpl, suffix);
  if (x == nullptr) return Fail(EINVAL);
  uint64_t state = Seed(tmpl);
  for (int t = 0; t < kTries; ++t) {
    FillXs(x, &state);
    AbsPath abs;
    if (!ForwardedPath(AT_FDCWD, tmpl, &abs)) return Fail(EINVAL);  // (cannot happen: same dir)
    int rc;
    if (directory) {
      rc = FromClient(iorelay_mkdir(g_client, abs.c_str(), CreationMode(0700)));
    } else {
      rc = OpenForwarded(abs.c_str(), O_RDWR | O_CREAT | O_EXCL | (flags & ~O_ACCMODE), 0600);
    }
    if (rc >= 0 || errno != EEXIST) return rc;
  }
  memcpy(x, "XXXXXX", 6);
  return Fail(EEXIST);
}

bool Forwarded(const char* tmpl) {
  AbsPath abs;
  return tmpl != nullptr && ForwardedPath(AT_FDCWD, tmpl, &abs);
}

}  // namespace

extern "C" {

IORELAY_EXPORT int mkstemp(char* tmpl) {
  if (!Forwarded(tmpl)) return REAL(mkstemp)(tmpl);
  return MakeForwardedTemp(tmpl, 0, 0, false);
}

IORELAY_EXPORT int mkstemp64(char* tmpl) {
  if (!Forwarded(tmpl)) return REAL(mkstemp64)(tmpl);
  return MakeForwardedTemp(tmpl, 0, 0, false);
}

IORELAY_EXPORT int mkostemp(char* tmpl, int flags) {
  if (!Forwarded(tmpl)) return REAL(mkostemp)(tmpl, flags);
  return MakeForwardedTemp(tmpl, 0, flags, false);
}

IORELAY_EXPORT int mkostemp64(char* tmpl, int flags) {
  if (!Forwarded(tmpl)) return REAL(mkostemp64)(tmpl, flags);
  return MakeForwardedTemp(tmpl, 0, flags, false);
}

IORELAY_EXPORT int mkstemps(char* tmpl, int suffix) {
  if (!Forwarded(tmpl)) return REAL(mkstemps)(tmpl, suffix);
  return MakeForwardedTemp(tmpl, suffix, 0, false);
}

IORELAY_EXPORT int mkostemps(char* tmpl, int suffix, int flags) {
  if (!Forwarded(tmpl)) return REAL(mkostemps)(tmpl, suffix, flags);
  return MakeForwardedTemp(tmpl, suffix, flags, false);
}

IORELAY_EXPORT char* mkdtemp(char* tmpl) {
  if (!Forwarded(tmpl)) return REAL(mkdtemp)(tmpl);
  return MakeForwardedTemp(tmpl, 0, 0, true) == 0 ? tmpl : nullptr;
}

}  // extern "C"
