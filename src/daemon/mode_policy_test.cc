// Files and directories created through the daemon get set-user-ID or set-group-ID bits only
// with --allow-setid.
#include "daemon/mode_policy.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "testutil/daemon_harness_testutil.h"

namespace iorelay::daemon {
namespace {

class ModePolicyTest : public ::testing::Test, protected testing::DaemonHarness {
 protected:
  void SetUp() override {
    PrepareDirs();
    old_umask_ = ::umask(0);  // the requested bits reach the file system but for the policy
    Start(BaseConfig());
  }
  void TearDown() override {
    Cleanup();
    ::umask(old_umask_);
  }
  mode_t ModeOf(const std::string& rel) {
    struct stat st;
    EXPECT_EQ(::stat((dir_ + "/root/" + rel).c_str(), &st), 0) << rel;
    return st.st_mode & 07777;
  }
  mode_t old_umask_ = 0;
};

TEST_F(ModePolicyTest, CreateDropsSetIdBits) {
  auto c = Admitted(secret_a_);
  ASSERT_GT(Open(*c, "/data/prog", O_RDWR | O_CREAT, 06755), 0);
  EXPECT_EQ(ModeOf("prog"), 0755u);
  ASSERT_GT(Open(*c, "/data/sticky", O_RDWR | O_CREAT, 01777), 0);
  EXPECT_EQ(ModeOf("sticky"), 01777u) << "only set-user-ID and set-group-ID are dropped";
}

TEST_F(ModePolicyTest, MkdirDropsSetIdBits) {
  auto c = Admitted(secret_a_);
  testing::Frame f;
  ASSERT_TRUE(
      c->Call(proto::Op::kMkdir, proto::EncodeFields(proto::MkdirRequest{"/data/d", 06775}), &f));
  EXPECT_EQ(f.header.status, 0);
  EXPECT_EQ(ModeOf("d"), 0775u);
}

TEST_F(ModePolicyTest, ChmodChangesModeButNeverSetsSetIdBits) {
  auto c = Admitted(secret_a_);
  ASSERT_GT(Open(*c, "/data/f", O_RDWR | O_CREAT, 0600), 0);
  testing::Frame f;
  ASSERT_TRUE(
      c->Call(proto::Op::kChmod, proto::EncodeFields(proto::ChmodRequest{"/data/f", 06751}), &f));
  EXPECT_EQ(f.header.status, 0);
  EXPECT_EQ(ModeOf("f"), 0751u);
  ASSERT_TRUE(c->Call(proto::Op::kChmod,
                      proto::EncodeFields(proto::ChmodRequest{"/data/missing", 0644}), &f));
  EXPECT_EQ(f.header.status, ENOENT);
  ASSERT_TRUE(
      c->Call(proto::Op::kChmod, proto::EncodeFields(proto::ChmodRequest{"/data/../x", 0644}), &f));
  EXPECT_EQ(f.header.status, EACCES);
}

class AllowSetIdTest : public ModePolicyTest {
 protected:
  void SetUp() override {
    PrepareDirs();
    old_umask_ = ::umask(0);
    Config c = BaseConfig();
    c.allow_setid = true;
    Start(c);
  }
};

TEST_F(AllowSetIdTest, AllowSetIdKeepsTheBits) {
  auto c = Admitted(secret_a_);
  ASSERT_GT(Open(*c, "/data/prog", O_RDWR | O_CREAT, 06755), 0);
  EXPECT_EQ(ModeOf("prog"), 06755u);
}

TEST_F(ModePolicyTest, FchmodNeverSetsSetIdBits) {
  auto c = Admitted(secret_a_);
  const int64_t handle = Open(*c, "/data/g", O_RDWR | O_CREAT, 0600);
  ASSERT_GT(handle, 0);
  testing::Frame f;
  ASSERT_TRUE(
      c->Call(proto::Op::kFchmod,
              proto::EncodeFields(proto::FchmodRequest{static_cast<uint64_t>(handle), 06740}), &f));
  EXPECT_EQ(f.header.status, 0);
  EXPECT_EQ(ModeOf("g"), 0740u);
}

}  // namespace
}  // namespace iorelay::daemon
