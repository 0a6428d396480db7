// The device model: profiles, seeks only on discontinuity, one call at a time.
#include "device/device_model.h"

#include <gtest/gtest.h>

namespace iorelay::device {
namespace {

TEST(DeviceProfile, PresetsAndOverrides) {
  auto hdd = ParseDeviceProfile("hdd");
  ASSERT_TRUE(hdd.ok());
  EXPECT_EQ(hdd->seek_ns, 8'000'000);
  EXPECT_DOUBLE_EQ(hdd->bytes_per_s, 100e6);
  auto ssd = ParseDeviceProfile("ssd");
  ASSERT_TRUE(ssd.ok());
  EXPECT_LT(ssd->seek_ns, hdd->seek_ns);
  auto custom = ParseDeviceProfile("seek=8ms,bw=100MBps");
  ASSERT_TRUE(custom.ok());
  EXPECT_EQ(custom->seek_ns, 8'000'000);
  EXPECT_DOUBLE_EQ(custom->bytes_per_s, 100e6);
  auto tuned = ParseDeviceProfile("hdd,bw=150MBps");
  ASSERT_TRUE(tuned.ok());
  EXPECT_EQ(tuned->name, "hdd");
  EXPECT_DOUBLE_EQ(tuned->bytes_per_s, 150e6);
  EXPECT_EQ(ToJson(*tuned)["seek"], "8ms");
  EXPECT_FALSE(ParseDeviceProfile("tape").ok());
  EXPECT_FALSE(ParseDeviceProfile("seek=fast").ok());
  EXPECT_FALSE(ParseDeviceProfile("rpm=7200").ok());
  EXPECT_FALSE(ParseDeviceProfile("").ok());
}

TEST(DeviceModel, SeeksOnlyWhenNotContinuing) {
  DeviceModel m(*ParseDeviceProfile("seek=8ms,bw=100MBps"));
  // 1 MB at 100 MB/s = 10 ms, plus the first seek.
  EXPECT_EQ(m.Submit(0, Access{1, 0, 1'000'000}), 18'000'000);
  // Continues: no seek. Submitted early, it starts when the head is free.
  EXPECT_EQ(m.Submit(0, Access{1, 1'000'000, 1'000'000}), 28'000'000);
  // Another file, same offset: a seek.
  EXPECT_EQ(m.CostNs(Access{2, 2'000'000, 1'000'000}), 18'000'000);
  // Backwards in the same file: a seek.
  EXPECT_EQ(m.CostNs(Access{1, 0, 100'000}), 9'000'000);
  // Idle device: starts at submission.
  EXPECT_EQ(m.Submit(50'000'000, Access{1, 2'000'000, 100'000}), 51'000'000);
  EXPECT_EQ(m.busy_until_ns(), 51'000'000);
}

TEST(DeviceModel, SequentialBeatsRandomByTheSeekCount) {
  DeviceModel seq(*ParseDeviceProfile("hdd"));
  DeviceModel rnd(*ParseDeviceProfile("hdd"));
  int64_t t_seq = 0;
  int64_t t_rnd = 0;
  for (uint64_t i = 0; i < 100; ++i) {
    t_seq = seq.Submit(0, Access{1, i * 65536, 65536});
    t_rnd = rnd.Submit(0, Access{1, ((i * 37) % 100) * 65536 * 2, 65536});
  }
  EXPECT_EQ(t_rnd - t_seq, 99 * 8'000'000);
}

TEST(DeviceModel, WritesPayTheWriteCostAndReadsDoNot) {
  auto p = ParseDeviceProfile("seek=100us,bw=1GBps,write=250us");
  ASSERT_TRUE(p.ok()) << p.status().message();
  DeviceModel m(*p);
  const Access read{1, 0, 1'000'000};
  Access write = read;
  write.write = true;
  EXPECT_EQ(m.CostNs(read), 100'000 + 1'000'000);
  EXPECT_EQ(m.CostNs(write), 100'000 + 250'000 + 1'000'000);
  m.Submit(0, write);
  write.offset = 1'000'000;  // continuing: no seek, the write cost still
  EXPECT_EQ(m.CostNs(write), 250'000 + 1'000'000);
  EXPECT_EQ(ToJson(*p)["write"], "250us");
  EXPECT_FALSE(ToJson(*ParseDeviceProfile("ssd")).contains("write"));
  EXPECT_FALSE(ParseDeviceProfile("ssd,write=soon").ok());
}

TEST(DeviceModel, MeasuredAccessTimesReplaceTheStraightLine) {
  auto p = ParseDeviceProfile("seek=1ms,bw=1GBps,access=64KiB:200us/1MiB:4ms/8MiB:9ms");
  ASSERT_TRUE(p.ok()) << p.status().message();
  DeviceModel m(*p);
  // Below the first point: the first point's time; on a point: its time (plus the first seek).
  EXPECT_EQ(m.Submit(0, Access{1, 0, 4096}), 1'200'000);
  EXPECT_EQ(m.CostNs(Access{1, 4096, 1 << 20}), 4'000'000);
  // Between points: linear (halfway from 1 MiB to 8 MiB: 6.5 ms), a 512 KiB access takes less
  // than a 1 MiB one but more than a 64 KiB one.
  EXPECT_EQ(m.CostNs(Access{1, 4096, (1 << 20) + 7 * (1 << 19)}), 6'500'000);
  EXPECT_LT(m.CostNs(Access{1, 4096, 1 << 19}), 4'000'000);
  EXPECT_GT(m.CostNs(Access{1, 4096, 1 << 19}), 200'000);
  // Beyond the last point: its time plus the rest at the bandwidth (1 MiB at 1 GB/s).
  EXPECT_EQ(m.CostNs(Access{1, 4096, 9 << 20}), 9'000'000 + 1'048'576);
  EXPECT_EQ(ToJson(*p)["access"], "64KiB:200us/1MiB:4ms/8MiB:9ms");
  EXPECT_FALSE(ParseDeviceProfile("access=1MiB:4ms/64KiB:1ms").ok());  // not increasing
  EXPECT_FALSE(ParseDeviceProfile("access=1MiB").ok());
  EXPECT_FALSE(ParseDeviceProfile("access=").ok());
  EXPECT_FALSE(ParseDeviceProfile("access=1MiB:fast").ok());
}

}  // namespace
}  // namespace iorelay::device
