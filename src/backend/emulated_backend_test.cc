// EmulatedBackend: a call continuing the previous one pays no seek, so sequential calls cost
// less than seeking ones; bad profiles are refused by name.
#include "backend/emulated_backend.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <vector>

#include "backend/posix_backend.h"

namespace iorelay::backend {
namespace {

class EmulatedBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/iorelay-emul-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    root_fd_ = ::open(base_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(root_fd_, 0);
  }
  void TearDown() override {
    ::close(root_fd_);
    std::filesystem::remove_all(base_);
  }
  // Elapsed time of two 4 KiB writes at `first` then `second`, on a fresh device (so the
  // first call always seeks).
  std::chrono::nanoseconds TwoWrites(uint64_t first, uint64_t second) {
    Result<device::DeviceProfile> p = device::ParseDeviceProfile("seek=200ms,bw=1GBps");
    EXPECT_TRUE(p.ok());
    EmulatedBackend b(std::make_unique<PosixBackend>(), *p);
    Result<int> fd = b.Open(root_fd_, "f", O_RDWR | O_CREAT, 0644);
    EXPECT_TRUE(fd.ok());
    std::vector<char> data(4096, 'x');
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(*b.Pwrite(*fd, data.data(), data.size(), first), data.size());
    struct iovec iov = {data.data(), data.size()};
    EXPECT_EQ(*b.Pwritev(*fd, &iov, 1, second), data.size());
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_TRUE(b.Close(*fd).ok());
    return took;
  }
  std::string base_;
  int root_fd_ = -1;
};

TEST_F(EmulatedBackendTest, SequentialCallsCostLessThanSeekingOnes) {
  auto sequential = TwoWrites(0, 4096);  // one seek (the first call)
  auto seeking = TwoWrites(0, 1 << 20);  // two seeks
  EXPECT_GE(sequential, std::chrono::milliseconds(200));
  EXPECT_GE(seeking, std::chrono::milliseconds(400));
  EXPECT_LT(sequential, seeking);  // (a seek long enough that no preemption makes up for it)
}

TEST(MakeBackendTest, EmulatedProfiles) {
  Result<std::unique_ptr<Backend>> hdd = MakeBackend("emulated:hdd", 0);
  ASSERT_TRUE(hdd.ok()) << hdd.status().ToString();
  EXPECT_STREQ((*hdd)->name(), "emulated");
  EXPECT_TRUE(MakeBackend("emulated:seek=8ms,bw=100MBps", 0).ok());
  Result<std::unique_ptr<Backend>> bad = MakeBackend("emulated:floppy", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), EINVAL);
}

}  // namespace
}  // namespace iorelay::backend
