// Field-by-field copies of the stat records (see stat_convert.h).
#include "proto/stat_convert.h"

#include <sys/sysmacros.h>

#include <cstring>

namespace iorelay::proto {
namespace {

struct statx_timestamp ToStatxTime(const struct timespec& ts) {
  struct statx_timestamp t;
  std::memset(&t, 0, sizeof t);
  t.tv_sec = ts.tv_sec;
  t.tv_nsec = static_cast<__u32>(ts.tv_nsec);
  return t;
}

}  // namespace

WireStat ToWire(const struct stat& s) {
  WireStat w;
  w.dev = s.st_dev;
  w.ino = s.st_ino;
  w.nlink = s.st_nlink;
  w.rdev = s.st_rdev;
  w.size = static_cast<uint64_t>(s.st_size);
  w.blocks = static_cast<uint64_t>(s.st_blocks);
  w.mode = s.st_mode;
  w.uid = s.st_uid;
  w.gid = s.st_gid;
  w.blksize = static_cast<uint32_t>(s.st_blksize);
  w.atime_sec = s.st_atim.tv_sec;
  w.mtime_sec = s.st_mtim.tv_sec;
  w.ctime_sec = s.st_ctim.tv_sec;
  w.atime_nsec = static_cast<uint32_t>(s.st_atim.tv_nsec);
  w.mtime_nsec = static_cast<uint32_t>(s.st_mtim.tv_nsec);
  w.ctime_nsec = static_cast<uint32_t>(s.st_ctim.tv_nsec);
  return w;
}

WireStatfs ToWire(const struct statfs& s) {
  WireStatfs w;
  w.type = static_cast<uint64_t>(s.f_type);
  w.bsize = static_cast<uint64_t>(s.f_bsize);
  w.blocks = s.f_blocks;
  w.bfree = s.f_bfree;
  w.bavail = s.f_bavail;
  w.files = s.f_files;
  w.ffree = s.f_ffree;
  w.namelen = static_cast<uint64_t>(s.f_namelen);
  w.frsize = static_cast<uint64_t>(s.f_frsize);
  w.flags = static_cast<uint64_t>(s.f_flags);
  return w;
}

UtimensTimes FromWire(const WireTimes& w) {
  return {{{w.atime_sec, w.atime_nsec}, {w.mtime_sec, w.mtime_nsec}}};
}

void ToStat(const WireStat& w, struct stat* st) {
  std::memset(st, 0, sizeof *st);
  st->st_dev = w.dev;
  st->st_ino = w.ino;
  st->st_nlink = w.nlink;
  st->st_rdev = w.rdev;
  st->st_size = static_cast<off_t>(w.size);
  st->st_blocks = static_cast<blkcnt_t>(w.blocks);
  st->st_mode = w.mode;
  st->st_uid = w.uid;
  st->st_gid = w.gid;
  st->st_blksize = w.blksize;
  st->st_atim = {w.atime_sec, w.atime_nsec};
  st->st_mtim = {w.mtime_sec, w.mtime_nsec};
  st->st_ctim = {w.ctime_sec, w.ctime_nsec};
}

void ToStatfs(const WireStatfs& w, struct statfs* st) {
  std::memset(st, 0, sizeof *st);
  st->f_type = static_cast<decltype(st->f_type)>(w.type);
  st->f_bsize = static_cast<decltype(st->f_bsize)>(w.bsize);
  st->f_blocks = w.blocks;
  st->f_bfree = w.bfree;
  st->f_bavail = w.bavail;
  st->f_files = w.files;
  st->f_ffree = w.ffree;
  st->f_namelen = static_cast<decltype(st->f_namelen)>(w.namelen);
  st->f_frsize = static_cast<decltype(st->f_frsize)>(w.frsize);
  st->f_flags = static_cast<decltype(st->f_flags)>(w.flags);
}

WireTimes ToWireTimes(const struct timespec* times) {
  if (times == nullptr) return {0, UTIME_NOW, 0, UTIME_NOW};
  return {times[0].tv_sec, times[0].tv_nsec, times[1].tv_sec, times[1].tv_nsec};
}

void StatToStatx(const struct stat& st, struct statx* out) {
  std::memset(out, 0, sizeof *out);
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
  std::memset(out, 0, sizeof *out);
  out->f_bsize = static_cast<unsigned long>(sf.f_bsize);
  out->f_frsize = static_cast<unsigned long>(sf.f_frsize != 0 ? sf.f_frsize : sf.f_bsize);
  out->f_blocks = sf.f_blocks;
  out->f_bfree = sf.f_bfree;
  out->f_bavail = sf.f_bavail;
  out->f_files = sf.f_files;
  out->f_ffree = sf.f_ffree;
  out->f_favail = sf.f_ffree;
  unsigned long fsid = 0;
  std::memcpy(&fsid, &sf.f_fsid, sizeof fsid < sizeof sf.f_fsid ? sizeof fsid : sizeof sf.f_fsid);
  out->f_fsid = fsid;
  out->f_flag = static_cast<unsigned long>(sf.f_flags) & ~static_cast<unsigned long>(0x0020);
  out->f_namemax = static_cast<unsigned long>(sf.f_namelen);
}

}  // namespace iorelay::proto
