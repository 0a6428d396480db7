// Field-by-field copies of the stat records (no layout assumptions across the wire).
#include "client/stat_convert.h"

#include <cstring>

namespace iorelay::client {

void ToStat(const proto::WireStat& w, struct stat* st) {
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

void ToStatfs(const proto::WireStatfs& w, struct statfs* st) {
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

proto::WireTimes ToWireTimes(const struct timespec* times) {
  if (times == nullptr) return {0, UTIME_NOW, 0, UTIME_NOW};
  return {times[0].tv_sec, times[0].tv_nsec, times[1].tv_sec, times[1].tv_nsec};
}

}  // namespace iorelay::client
