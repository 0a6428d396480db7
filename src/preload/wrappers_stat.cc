// stat and statfs in all their spellings (64-bit aliases, *at, statx, statvfs and the
// pre-2.33 __xstat family), on forwarded paths and descriptors.
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "preload/libc_next.h"
#include "preload/state.h"
#include "proto/stat_convert.h"

using namespace iorelay::preload;

static_assert(sizeof(struct stat) == sizeof(struct stat64), "x86_64: stat64 == stat");
static_assert(sizeof(struct statfs) == sizeof(struct statfs64), "x86_64: statfs64 == statfs");
static_assert(sizeof(struct statvfs) == sizeof(struct statvfs64), "x86_64");

namespace {

struct stat* AsStat(struct stat64* st) {
  return reinterpret_cast<struct stat*>(st);
}

// fstat of a forwarded descriptor (directories and O_PATH by their path).
int FstatForwarded(int fd, struct stat* st) {
  FdTable::Ref e = g_table.Acquire(fd);
  if (!e) return Fail(EBADF);
  int rc = e->file != nullptr ? iorelay_fstat(e->file, st)
                              : iorelay_stat(g_client, e->path.c_str(), st, 0);
  return FromClient(rc);
}

int FstatfsForwarded(int fd, struct statfs* sf) {
  FdTable::Ref e = g_table.Acquire(fd);
  if (!e) return Fail(EBADF);
  int rc = e->file != nullptr ? iorelay_fstatfs(e->file, sf)
                              : iorelay_statfs(g_client, e->path.c_str(), sf);
  return FromClient(rc);
}

// fstatat's decision: 1 handled (result in *rc), 0 not forwarded.
// Not forwarded: *path becomes the one libc must get (LibcPath; it may point into *abs).
bool StatAt(int dirfd, const char** path, AbsPath* abs, struct stat* st, int flags, int* rc) {
  if ((flags & AT_EMPTY_PATH) && *path != nullptr && (*path)[0] == '\0') {
    if (!IsForwardedFd(dirfd)) return false;
    *rc = FstatForwarded(dirfd, st);
    return true;
  }
  if (!ForwardedPath(dirfd, *path, abs)) {
    *path = LibcPath(*path, *abs);
    return false;
  }
  const bool follow = (flags & AT_SYMLINK_NOFOLLOW) == 0;
  const int got = iorelay_stat(g_client, abs->c_str(), st, follow ? 0 : 1);
  if (got < 0 && LeadsOutOfTheTree(-got, abs->c_str(), follow, abs)) {
    *path = abs->c_str();  // a link out of the tree: libc stats its target
    return false;
  }
  *rc = FromClient(got);
  return true;
}

bool StatfsPath(const char** path, AbsPath* abs, struct statfs* sf, int* rc) {
  if (!ForwardedPath(AT_FDCWD, *path, abs)) {
    *path = LibcPath(*path, *abs);
    return false;
  }
  const int got = iorelay_statfs(g_client, abs->c_str(), sf);
  if (got < 0 && LeadsOutOfTheTree(-got, abs->c_str(), true, abs)) {
    *path = abs->c_str();  // a link out of the tree: libc asks about its target
    return false;
  }
  *rc = FromClient(got);
  return true;
}

bool StatvfsPath(const char** path, AbsPath* abs, struct statvfs* out, int* rc) {
  struct statfs sf;
  if (!StatfsPath(path, abs, &sf, rc)) return false;
  if (*rc == 0) iorelay::proto::StatfsToStatvfs(sf, out);
  return true;
}

int FstatvfsForwarded(int fd, struct statvfs* out) {
  struct statfs sf;
  int rc = FstatfsForwarded(fd, &sf);
  if (rc == 0) iorelay::proto::StatfsToStatvfs(sf, out);
  return rc;
}

}  // namespace

extern "C" {

IORELAY_EXPORT int stat(const char* path, struct stat* st) noexcept {
  int rc;
  AbsPath abs;
  if (StatAt(AT_FDCWD, &path, &abs, st, 0, &rc)) return rc;
  return REAL(stat)(path, st);
}

IORELAY_EXPORT int stat64(const char* path, struct stat64* st) noexcept {
  int rc;
  AbsPath abs;
  if (StatAt(AT_FDCWD, &path, &abs, AsStat(st), 0, &rc)) return rc;
  return REAL(stat64)(path, st);
}

IORELAY_EXPORT int lstat(const char* path, struct stat* st) noexcept {
  int rc;
  AbsPath abs;
  if (StatAt(AT_FDCWD, &path, &abs, st, AT_SYMLINK_NOFOLLOW, &rc)) return rc;
  return REAL(lstat)(path, st);
}

IORELAY_EXPORT int lstat64(const char* path, struct stat64* st) noexcept {
  int rc;
  AbsPath abs;
  if (StatAt(AT_FDCWD, &path, &abs, AsStat(st), AT_SYMLINK_NOFOLLOW, &rc)) return rc;
  return REAL(lstat64)(path, st);
}

IORELAY_EXPORT int fstat(int fd, struct stat* st) noexcept {
  if (!IsForwardedFd(fd)) return REAL(fstat)(fd, st);
  return FstatForwarded(fd, st);
}

IORELAY_EXPORT int fstat64(int fd, struct stat64* st) noexcept {
  if (!IsForwardedFd(fd)) return REAL(fstat64)(fd, st);
  return FstatForwarded(fd, AsStat(st));
}

IORELAY_EXPORT int fstatat(int dirfd, const char* path, struct stat* st, int flags) noexcept {
  int rc;
  AbsPath abs;
  if (StatAt(dirfd, &path, &abs, st, flags, &rc)) return rc;
  return REAL(fstatat)(dirfd, path, st, flags);
}

IORELAY_EXPORT int fstatat64(int dirfd, const char* path, struct stat64* st, int flags) noexcept {
  int rc;
  AbsPath abs;
  if (StatAt(dirfd, &path, &abs, AsStat(st), flags, &rc)) return rc;
  return REAL(fstatat64)(dirfd, path, st, flags);
}

IORELAY_EXPORT int statx(int dirfd, const char* path, int flags, unsigned mask,
                         struct statx* out) noexcept {
  struct stat st;
  int rc;
  AbsPath abs;
  if (!StatAt(dirfd, &path, &abs, &st, flags, &rc))
    return REAL(statx)(dirfd, path, flags, mask, out);
  if (rc == 0) iorelay::proto::StatToStatx(st, out);
  return rc;
}

// Pre-2.33 binaries: `ver` is _STAT_VER (1 on x86_64); the layout is today's.
IORELAY_EXPORT int __xstat(int ver, const char* path, struct stat* st) {
  int rc;
  AbsPath abs;
  if (StatAt(AT_FDCWD, &path, &abs, st, 0, &rc)) return rc;
  return REAL(__xstat)(ver, path, st);
}

IORELAY_EXPORT int __xstat64(int ver, const char* path, struct stat64* st) {
  int rc;
  AbsPath abs;
  if (StatAt(AT_FDCWD, &path, &abs, AsStat(st), 0, &rc)) return rc;
  return REAL(__xstat64)(ver, path, st);
}

IORELAY_EXPORT int __lxstat(int ver, const char* path, struct stat* st) {
  int rc;
  AbsPath abs;
  if (StatAt(AT_FDCWD, &path, &abs, st, AT_SYMLINK_NOFOLLOW, &rc)) return rc;
  return REAL(__lxstat)(ver, path, st);
}

IORELAY_EXPORT int __lxstat64(int ver, const char* path, struct stat64* st) {
  int rc;
  AbsPath abs;
  if (StatAt(AT_FDCWD, &path, &abs, AsStat(st), AT_SYMLINK_NOFOLLOW, &rc)) return rc;
  return REAL(__lxstat64)(ver, path, st);
}

IORELAY_EXPORT int __fxstat(int ver, int fd, struct stat* st) {
  if (!IsForwardedFd(fd)) return REAL(__fxstat)(ver, fd, st);
  return FstatForwarded(fd, st);
}

IORELAY_EXPORT int __fxstat64(int ver, int fd, struct stat64* st) {
  if (!IsForwardedFd(fd)) return REAL(__fxstat64)(ver, fd, st);
  return FstatForwarded(fd, AsStat(st));
}

IORELAY_EXPORT int __fxstatat(int ver, int dirfd, const char* path, struct stat* st, int flags) {
  int rc;
  AbsPath abs;
  if (StatAt(dirfd, &path, &abs, st, flags, &rc)) return rc;
  return REAL(__fxstatat)(ver, dirfd, path, st, flags);
}

IORELAY_EXPORT int __fxstatat64(int ver, int dirfd, const char* path, struct stat64* st,
                                int flags) {
  int rc;
  AbsPath abs;
  if (StatAt(dirfd, &path, &abs, AsStat(st), flags, &rc)) return rc;
  return REAL(__fxstatat64)(ver, dirfd, path, st, flags);
}

IORELAY_EXPORT int statfs(const char* path, struct statfs* sf) noexcept {
  int rc;
  AbsPath abs;
  if (StatfsPath(&path, &abs, sf, &rc)) return rc;
  return REAL(statfs)(path, sf);
}

IORELAY_EXPORT int statfs64(const char* path, struct statfs64* sf) noexcept {
  int rc;
  AbsPath abs;
  if (StatfsPath(&path, &abs, reinterpret_cast<struct statfs*>(sf), &rc)) return rc;
  return REAL(statfs64)(path, sf);
}

IORELAY_EXPORT int fstatfs(int fd, struct statfs* sf) noexcept {
  if (!IsForwardedFd(fd)) return REAL(fstatfs)(fd, sf);
  return FstatfsForwarded(fd, sf);
}

IORELAY_EXPORT int fstatfs64(int fd, struct statfs64* sf) noexcept {
  if (!IsForwardedFd(fd)) return REAL(fstatfs64)(fd, sf);
  return FstatfsForwarded(fd, reinterpret_cast<struct statfs*>(sf));
}

IORELAY_EXPORT int statvfs(const char* path, struct statvfs* out) noexcept {
  int rc;
  AbsPath abs;
  if (StatvfsPath(&path, &abs, out, &rc)) return rc;
  return REAL(statvfs)(path, out);
}

IORELAY_EXPORT int statvfs64(const char* path, struct statvfs64* out) noexcept {
  int rc;
  AbsPath abs;
  if (StatvfsPath(&path, &abs, reinterpret_cast<struct statvfs*>(out), &rc)) return rc;
  return REAL(statvfs64)(path, out);
}

IORELAY_EXPORT int fstatvfs(int fd, struct statvfs* out) noexcept {
  if (!IsForwardedFd(fd)) return REAL(fstatvfs)(fd, out);
  return FstatvfsForwarded(fd, out);
}

IORELAY_EXPORT int fstatvfs64(int fd, struct statvfs64* out) noexcept {
  if (!IsForwardedFd(fd)) return REAL(fstatvfs64)(fd, out);
  return FstatvfsForwarded(fd, reinterpret_cast<struct statvfs*>(out));
}

}  // extern "C"
