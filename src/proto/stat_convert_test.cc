// The stat records survive the wire both ways, and the interposer's other shapes keep their fields.
#include "proto/stat_convert.h"

#include <gtest/gtest.h>
#include <sys/sysmacros.h>

#include <cstring>

namespace iorelay::proto {
namespace {

struct stat SomeStat() {
  struct stat s;
  std::memset(&s, 0, sizeof s);
  s.st_dev = makedev(8, 1);
  s.st_ino = 1234567;
  s.st_nlink = 2;
  s.st_rdev = makedev(4, 64);
  s.st_size = (int64_t{5} << 32) + 7;
  s.st_blocks = 99;
  s.st_mode = S_IFREG | 0640;
  s.st_uid = 1000;
  s.st_gid = 100;
  s.st_blksize = 4096;
  s.st_atim = {11, 12};
  s.st_mtim = {21, 22};
  s.st_ctim = {31, 999999999};
  return s;
}

TEST(StatConvertTest, StatRoundTripsThroughTheWire) {
  const struct stat in = SomeStat();
  struct stat out;
  ToStat(ToWire(in), &out);
  EXPECT_EQ(out.st_dev, in.st_dev);
  EXPECT_EQ(out.st_ino, in.st_ino);
  EXPECT_EQ(out.st_nlink, in.st_nlink);
  EXPECT_EQ(out.st_rdev, in.st_rdev);
  EXPECT_EQ(out.st_size, in.st_size);
  EXPECT_EQ(out.st_blocks, in.st_blocks);
  EXPECT_EQ(out.st_mode, in.st_mode);
  EXPECT_EQ(out.st_uid, in.st_uid);
  EXPECT_EQ(out.st_gid, in.st_gid);
  EXPECT_EQ(out.st_blksize, in.st_blksize);
  EXPECT_EQ(out.st_ctim.tv_sec, in.st_ctim.tv_sec);
  EXPECT_EQ(out.st_ctim.tv_nsec, in.st_ctim.tv_nsec);
}

TEST(StatConvertTest, StatfsRoundTripsThroughTheWire) {
  struct statfs in;
  std::memset(&in, 0, sizeof in);
  in.f_type = 0x6969;
  in.f_bsize = 4096;
  in.f_blocks = 1000;
  in.f_bfree = 400;
  in.f_bavail = 300;
  in.f_files = 50;
  in.f_ffree = 20;
  in.f_namelen = 255;
  in.f_frsize = 4096;
  in.f_flags = 0x20 | 0x1;
  struct statfs out;
  ToStatfs(ToWire(in), &out);
  EXPECT_EQ(out.f_type, in.f_type);
  EXPECT_EQ(out.f_blocks, in.f_blocks);
  EXPECT_EQ(out.f_bavail, in.f_bavail);
  EXPECT_EQ(out.f_namelen, in.f_namelen);
  EXPECT_EQ(out.f_flags, in.f_flags);
  struct statvfs vfs;
  StatfsToStatvfs(out, &vfs);
  EXPECT_EQ(vfs.f_bsize, 4096u);
  EXPECT_EQ(vfs.f_favail, 20u);
  EXPECT_EQ(vfs.f_flag, 0x1u);  // ST_VALID (0x20) is statfs's own, not statvfs's
  EXPECT_EQ(vfs.f_namemax, 255u);
}

TEST(StatConvertTest, TimesBothWays) {
  EXPECT_EQ(ToWireTimes(nullptr).atime_nsec, UTIME_NOW);
  const struct timespec given[2] = {{1, 2}, {3, UTIME_OMIT}};
  const UtimensTimes back = FromWire(ToWireTimes(given));
  EXPECT_EQ(back.ts[0].tv_sec, 1);
  EXPECT_EQ(back.ts[0].tv_nsec, 2);
  EXPECT_EQ(back.ts[1].tv_nsec, UTIME_OMIT);
}

TEST(StatConvertTest, StatxCarriesTheBasicFields) {
  const struct stat in = SomeStat();
  struct statx x;
  StatToStatx(in, &x);
  EXPECT_EQ(x.stx_mask, static_cast<uint32_t>(STATX_BASIC_STATS));
  EXPECT_EQ(x.stx_size, static_cast<uint64_t>(in.st_size));
  EXPECT_EQ(x.stx_mode, in.st_mode);
  EXPECT_EQ(x.stx_dev_major, 8u);
  EXPECT_EQ(x.stx_rdev_minor, 64u);
  EXPECT_EQ(x.stx_mtime.tv_sec, 21);
  EXPECT_EQ(x.stx_mtime.tv_nsec, 22u);
}

}  // namespace
}  // namespace iorelay::proto
