// A file's mode, owner and times on forwarded paths and descriptors: fchmod; chown, fchown,
// lchown and fchownat; utimensat, futimens and the older utime, utimes, lutimes, futimes and
// futimesat (all become one utimens call).
#include <sys/stat.h>
#include <sys/time.h>
#include <utime.h>

#include "preload/libc_next.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

// A change on a forwarded descriptor: through its file, or by its path for a directory.
// O_PATH descriptors are EBADF, as for the kernel.
template <class OnFile, class OnPath>
int ChangeForwardedFd(int fd, OnFile on_file, OnPath on_path) {
  FdTable::Ref e = g_table.Acquire(fd);
  if (!e || (e->open_flags & O_PATH)) return Fail(EBADF);
  return FromClient(e->file != nullptr ? on_file(e->file) : on_path(e->path.c_str()));
}

int FdTimes(int fd, const struct timespec* times) {
  return ChangeForwardedFd(
      fd, [&](iorelay_file* f) { return iorelay_futimens(f, times); },
      [&](const char* path) { return iorelay_utimens(g_client, path, times, 0); });
}

// utimes' microseconds as utimensat's nanoseconds (NULL stays NULL: both now). An invalid
// tv_usec stays invalid, and the daemon's kernel refuses it (EINVAL).
struct Timespecs {
  struct timespec ts[2];
  const struct timespec* get() const { return null ? nullptr : ts; }
  bool null = false;
};
Timespecs FromTimevals(const struct timeval* tv) {
  if (tv == nullptr) return {.null = true};
  return {{{tv[0].tv_sec, tv[0].tv_usec * 1000}, {tv[1].tv_sec, tv[1].tv_usec * 1000}}};
}

// utimensat's decision: true when forwarded (result in *rc).
bool TimesAt(int dirfd, const char* path, const struct timespec* times, int flags, int* rc) {
  // A null path (futimesat) or AT_EMPTY_PATH with "": the descriptor itself.
  if (path == nullptr || ((flags & AT_EMPTY_PATH) && path[0] == '\0')) {
    if (!IsForwardedFd(dirfd)) return false;
    *rc = FdTimes(dirfd, times);
    return true;
  }
  AbsPath abs;
  if (!ForwardedPath(dirfd, path, &abs)) {
    if (!abs.rebased) return false;
    *rc = REAL(utimensat)(dirfd, abs.c_str(), times, flags);  // LibcPath
    return true;
  }
  if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
    *rc = Fail(EINVAL);
  } else {
    const bool follow = (flags & AT_SYMLINK_NOFOLLOW) == 0;
    *rc =
        OrOutOfTheTree(iorelay_utimens(g_client, abs.c_str(), times, follow ? 0 : 1), &abs, follow,
                       [&](const char* p) { return REAL(utimensat)(AT_FDCWD, p, times, flags); });
  }
  return true;
}

// Ownership is not forwarded: the daemon's credentials, not the caller's, would decide who may
// give a file away. A change to the owner and group the file already has is a change to
// nothing and succeeds (tar and cp -p ask for it); any other is EPERM, what a caller without
// the privilege to give files away gets.
int SameOwner(const struct stat& st, uid_t uid, gid_t gid) {
  const bool same_uid = uid == static_cast<uid_t>(-1) || uid == st.st_uid;
  const bool same_gid = gid == static_cast<gid_t>(-1) || gid == st.st_gid;
  return same_uid && same_gid ? 0 : Fail(EPERM);
}

// (A link out of the tree: the change is made in this process's tree, with its rights.)
int OwnerAt(AbsPath* abs, uid_t uid, gid_t gid, bool nofollow) {
  struct stat st;
  if (int rc = iorelay_stat(g_client, abs->c_str(), &st, nofollow ? 1 : 0); rc < 0) {
    return OrOutOfTheTree(rc, abs, !nofollow, [&](const char* p) {
      return REAL(fchownat)(AT_FDCWD, p, uid, gid, nofollow ? AT_SYMLINK_NOFOLLOW : 0);
    });
  }
  return SameOwner(st, uid, gid);
}

}  // namespace

extern "C" {

IORELAY_EXPORT int chown(const char* path, uid_t uid, gid_t gid) noexcept {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(chown)(LibcPath(path, abs), uid, gid);
  return OwnerAt(&abs, uid, gid, false);
}

IORELAY_EXPORT int lchown(const char* path, uid_t uid, gid_t gid) noexcept {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(lchown)(LibcPath(path, abs), uid, gid);
  return OwnerAt(&abs, uid, gid, true);
}

IORELAY_EXPORT int fchownat(int dirfd, const char* path, uid_t uid, gid_t gid, int flags) noexcept {
  if (NullAnyway(path)) return Fail(EFAULT);
  if ((flags & AT_EMPTY_PATH) && path[0] == '\0' && IsForwardedFd(dirfd)) {
    return fchown(dirfd, uid, gid);
  }
  AbsPath abs;
  if (!ForwardedPath(dirfd, path, &abs))
    return REAL(fchownat)(dirfd, LibcPath(path, abs), uid, gid, flags);
  if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) return Fail(EINVAL);
  return OwnerAt(&abs, uid, gid, (flags & AT_SYMLINK_NOFOLLOW) != 0);
}

IORELAY_EXPORT int fchown(int fd, uid_t uid, gid_t gid) noexcept {
  if (!IsForwardedFd(fd)) return REAL(fchown)(fd, uid, gid);
  struct stat st;
  int rc = ChangeForwardedFd(
      fd, [&](iorelay_file* f) { return iorelay_fstat(f, &st); },
      [&](const char* path) { return iorelay_stat(g_client, path, &st, 0); });
  return rc < 0 ? rc : SameOwner(st, uid, gid);
}

IORELAY_EXPORT int fchmod(int fd, mode_t mode) noexcept {
  if (!IsForwardedFd(fd)) return REAL(fchmod)(fd, mode);
  return ChangeForwardedFd(
      fd, [&](iorelay_file* f) { return iorelay_fchmod(f, mode); },
      [&](const char* path) { return iorelay_chmod(g_client, path, mode); });
}

IORELAY_EXPORT int utimensat(int dirfd, const char* path, const struct timespec times[2],
                             int flags) noexcept {
  int rc;
  // glibc refuses a null path here (EINVAL; futimens reaches the system call another way).
  if (!NullAnyway(path) && TimesAt(dirfd, path, times, flags, &rc)) return rc;
  return REAL(utimensat)(dirfd, path, times, flags);
}

IORELAY_EXPORT int futimens(int fd, const struct timespec times[2]) noexcept {
  if (!IsForwardedFd(fd)) return REAL(futimens)(fd, times);
  return FdTimes(fd, times);
}

IORELAY_EXPORT int utimes(const char* path, const struct timeval tv[2]) noexcept {
  int rc;
  if (TimesAt(AT_FDCWD, path, FromTimevals(tv).get(), 0, &rc)) return rc;
  return REAL(utimes)(path, tv);
}

IORELAY_EXPORT int lutimes(const char* path, const struct timeval tv[2]) noexcept {
  int rc;
  if (TimesAt(AT_FDCWD, path, FromTimevals(tv).get(), AT_SYMLINK_NOFOLLOW, &rc)) return rc;
  return REAL(lutimes)(path, tv);
}

IORELAY_EXPORT int futimes(int fd, const struct timeval tv[2]) noexcept {
  if (!IsForwardedFd(fd)) return REAL(futimes)(fd, tv);
  return FdTimes(fd, FromTimevals(tv).get());
}

IORELAY_EXPORT int futimesat(int dirfd, const char* path, const struct timeval tv[2]) noexcept {
  int rc;
  if (TimesAt(dirfd, path, FromTimevals(tv).get(), 0, &rc)) return rc;
  return REAL(futimesat)(dirfd, path, tv);
}

IORELAY_EXPORT int utime(const char* path, const struct utimbuf* times) noexcept {
  int rc;
  if (times == nullptr) {
    if (TimesAt(AT_FDCWD, path, nullptr, 0, &rc)) return rc;
  } else {
    const struct timespec ts[2] = {{times->actime, 0}, {times->modtime, 0}};
    if (TimesAt(AT_FDCWD, path, ts, 0, &rc)) return rc;
  }
  return REAL(utime)(path, times);
}

}  // extern "C"
