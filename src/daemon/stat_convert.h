// struct stat / struct statfs to their wire forms, and file times from theirs.
#pragma once

#include <sys/stat.h>
#include <sys/statfs.h>

#include "proto/messages.h"

namespace iorelay::daemon {

inline proto::WireStat ToWire(const struct stat& s) {
  proto::WireStat w;
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

// The wire's times as utimensat(2) takes them (the kernel refuses bad nanoseconds: EINVAL).
struct Times {
  struct timespec ts[2];
};
inline Times FromWire(const proto::WireTimes& w) {
  return {{{w.atime_sec, w.atime_nsec}, {w.mtime_sec, w.mtime_nsec}}};
}

inline proto::WireStatfs ToWire(const struct statfs& s) {
  proto::WireStatfs w;
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

}  // namespace iorelay::daemon
