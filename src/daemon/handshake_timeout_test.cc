// A connection that does not authenticate within --handshake-timeout-ms is closed (it holds a
// thread); an authenticated one may stay idle.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "testutil/daemon_harness_testutil.h"

namespace iorelay::daemon {
namespace {

class HandshakeTimeoutTest : public ::testing::Test, protected testing::DaemonHarness {
 protected:
  void SetUp() override {
    PrepareDirs();
    Config c = BaseConfig();
    c.handshake_timeout_ms = 1000;  // long enough for the admitted client's own handshake
    Start(c);
  }
  void TearDown() override { Cleanup(); }
};

TEST_F(HandshakeTimeoutTest, SilentConnectionIsClosedAuthenticatedOneMayIdle) {
  testing::RawClient silent;
  ASSERT_TRUE(silent.Connect(socket_));
  auto admitted = Admitted(secret_a_);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(silent.WaitClosed(6000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // idle past the deadline
  testing::Frame f;
  ASSERT_TRUE(admitted->Call(proto::Op::kPing, {}, &f));
  EXPECT_EQ(f.header.status, 0);
}

}  // namespace
}  // namespace iorelay::daemon
