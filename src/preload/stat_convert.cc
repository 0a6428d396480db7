// struct stat → statx, struct statfs → statvfs (see stat_convert.h).
#include "preload/stat_convert.h"

#include <string.h>
#include <sys/sysmacros.h>

namespace iorelay::preload {
namespace {

struct statx_timestamp ToStatxTime(const struct timespec& ts) {
  struct statx_timestamp t;
  memset(&t, 0, sizeof t);
  t.tv_sec = ts.tv_sec;
  t.tv_nsec = static_cast<__u32>(ts.tv_nsec);
  return t;
}

}  // namespace

void StatToStatx(const struct stat& st, struct statx* out) {
  memset(out, 0, sizeof *out);
  out->stx_mask = STATX_BASIC_STATS;
  out->stx_blksize = static_cast<__u32>(st.st_blksize);
  out->stx_nlink = static_cast<__u32>(st.st_nlink);
  out->stx_uid = st.st_uid;
  out->stx_gid = st.st_gid;
  out->stx_mode = static_cast<__u16>(st.st_mode);
  out->stx_ino = st.st_ino;
  out->stx_size = static_cast<__u64>(st.st_size);
  out->stx_blocks = static_cast<__u64>(st.st_blocks);
  out->stx_atime = ToStatxTime(st.st_atim);
  out->stx_mtime = ToStatxTime(st.st_mtim);
  out->stx_ctime = ToStatxTime(st.st_ctim);
  out->stx_rdev_major = major(st.st_rdev);
  out->stx_rdev_minor = minor(st.st_rdev);
  out->stx_dev_major = major(st.st_dev);
  out->stx_dev_minor = minor(st.st_dev);
}

void StatfsToStatvfs(const struct statfs& sf, struct statvfs* out) {
  memset(out, 0, sizeof *out);
  out->f_bsize = static_cast<unsigned long>(sf.f_bsize);
  out->f_frsize = static_cast<unsigned long>(sf.f_frsize != 0 ? sf.f_frsize : sf.f_bsize);
  out->f_blocks = sf.f_blocks;
  out->f_bfree = sf.f_bfree;
  out->f_bavail = sf.f_bavail;
  out->f_files = sf.f_files;
  out->f_ffree = sf.f_ffree;
  out->f_favail = sf.f_ffree;
  unsigned long fsid = 0;
  memcpy(&fsid, &sf.f_fsid, sizeof fsid < sizeof sf.f_fsid ? sizeof fsid : sizeof sf.f_fsid);
  out->f_fsid = fsid;
  out->f_flag = static_cast<unsigned long>(sf.f_flags) & ~static_cast<unsigned long>(0x0020);
  out->f_namemax = static_cast<unsigned long>(sf.f_namelen);
}

}  // namespace iorelay::preload
