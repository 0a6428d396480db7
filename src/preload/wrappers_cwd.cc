// The working directory inside forwarded directories (cwd.h): chdir, fchdir, getcwd and its
// variants. Entering a forwarded directory moves the kernel's working directory to the gone
// directory; leaving it for a real one gives the kernel its working directory back.
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload/cwd.h"
#include "preload/fd_ops.h"
#include "preload/libc_next.h"
#include "preload/path_resolve.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

// A change to a real directory: the kernel's change and the end of the record together.
template <class Change>
int LeaveForwarded(Change change) {
  iorelay::MutexLock lock(g_cwd_mu);
  int rc = change();
  if (rc == 0) ClearForwardedCwd();
  return rc;
}

// Enters the forwarded directory `abs` (as ForwardedPath gives it), after the checks chdir makes:
// a directory, searchable. The record is `abs`; one with ".." (which getcwd must not give) is
// its canonical form, walked through the daemon's links, since the ".." may follow a link (a
// link out of the forwarded tree then makes it a real directory's change). Others keep their
// links, so that fchdir down a tree (fts, nftw) costs no walk.
int EnterForwarded(const char* abs) {
  char canonical[PATH_MAX];
  if (strstr(abs, "/..") == nullptr) {
    if (strlen(abs) >= sizeof canonical) return Fail(ENAMETOOLONG);
    strcpy(canonical, abs);
  } else {
    const int n = CanonicalForwarded(abs, canonical, sizeof canonical);
    if (n == kLeftTheTree) return LeaveForwarded([&] { return REAL(chdir)(canonical); });
    if (n < 0) return Fail(-n);
  }
  struct stat st;
  if (int rc = iorelay_stat(g_client, canonical, &st, 0); rc < 0) return Fail(-rc);
  if (!S_ISDIR(st.st_mode)) return Fail(ENOTDIR);
  if (int rc = iorelay_access(g_client, canonical, X_OK); rc < 0) return Fail(-rc);
  const int gone = GoneDirectory();
  if (gone < 0) return Fail(-gone);
  iorelay::MutexLock lock(g_cwd_mu);
  if (REAL(fchdir)(gone) != 0) return -1;
  (void)RecordForwardedCwd(canonical);  // fits: PATH_MAX
  return 0;
}

// getcwd's contract over a known path: a buffer of the caller's or one of ours.
char* CopyCwd(const char* cwd, char* buf, size_t size) {
  const size_t need = strlen(cwd) + 1;
  if (buf != nullptr && size == 0) return (errno = EINVAL, nullptr);
  if (size != 0 && size < need) return (errno = ERANGE, nullptr);
  if (buf == nullptr) {
    buf = static_cast<char*>(malloc(size != 0 ? size : need));
    if (buf == nullptr) return (errno = ENOMEM, nullptr);
  }
  memcpy(buf, cwd, need);
  return buf;
}

}  // namespace

extern "C" {

IORELAY_EXPORT int chdir(const char* path) noexcept {
  if (NullAnyway(path)) return Fail(EFAULT);
  AbsPath abs;
  if (ForwardedPath(AT_FDCWD, path, &abs)) return EnterForwarded(abs.c_str());
  // From a forwarded directory, a relative path is taken against it (LibcPath).
  const char* target = LibcPath(path, abs);
  return LeaveForwarded([&] { return REAL(chdir)(target); });
}

IORELAY_EXPORT int fchdir(int fd) noexcept {
  if (!IsForwardedFd(fd)) return LeaveForwarded([&] { return REAL(fchdir)(fd); });
  std::string path;
  {
    FdTable::Ref e = g_table.Acquire(fd);
    if (!e) return Fail(EBADF);
    path = e->path;  // a file's: EnterForwarded's stat says ENOTDIR
  }
  return EnterForwarded(path.c_str());
}

IORELAY_EXPORT char* getcwd(char* buf, size_t size) noexcept {
  char cwd[PATH_MAX];
  if (!ForwardedCwd(cwd, sizeof cwd)) return REAL(getcwd)(buf, size);
  return CopyCwd(cwd, buf, size);
}

IORELAY_EXPORT char* __getcwd_chk(char* buf, size_t size, size_t buflen) {
  if (size > buflen) __chk_fail();
  char cwd[PATH_MAX];
  if (!ForwardedCwd(cwd, sizeof cwd)) return REAL(__getcwd_chk)(buf, size, buflen);
  return CopyCwd(cwd, buf, size);
}

// glibc's own version trusts $PWD after stat calls the interposer does not see.
IORELAY_EXPORT char* get_current_dir_name() noexcept {
  char cwd[PATH_MAX];
  if (!ForwardedCwd(cwd, sizeof cwd)) return REAL(get_current_dir_name)();
  return CopyCwd(cwd, nullptr, 0);
}

}  // extern "C"
