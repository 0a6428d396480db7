// Regression test for the `make demo` fio run's `connections_closed_protocol_error 3`: a client
// that leaves with a reply unread (the interposer posts a close without waiting for its answer,
// then the process exits) makes its kernel reset the connection; the daemon counted that reset,
// and a reply it could no longer send, as protocol errors. Both are the client's end.
#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "testutil/daemon_harness_testutil.h"

namespace iorelay::daemon {
namespace {

using proto::Op;
using testing::RawClient;

class ClientDepartureTest : public ::testing::Test, protected testing::DaemonHarness {
 protected:
  void SetUp() override {
    PrepareDirs();
    Start(BaseConfig());
  }
  void TearDown() override { Cleanup(); }
  uint64_t Counter(const std::string& name) { return daemon_->StatsJson()[name].get<uint64_t>(); }
  // Waits until no connection is open; false after 5 s.
  bool AllClosed() {
    for (int i = 0; i < 500 && Counter("connections_open") != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return Counter("connections_open") == 0;
  }
};

TEST_F(ClientDepartureTest, LeavingWithAReplyUnreadIsNoProtocolError) {
  std::unique_ptr<RawClient> c = Admitted(secret_a_);
  ASSERT_TRUE(c->SendFrame(Op::kPing, 7, {}));
  struct pollfd p = {c->fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);  // the reply is there, unread: closing resets
  c.reset();
  EXPECT_TRUE(AllClosed());
  EXPECT_EQ(Counter("connections_closed_protocol_error"), 0u);
}

TEST_F(ClientDepartureTest, LeavingBeforeTheReplyIsSentIsNoProtocolError) {
  std::unique_ptr<RawClient> c = Admitted(secret_a_);
  ASSERT_TRUE(c->SendFrame(Op::kPing, 7, {}));
  c.reset();  // gone before the daemon reads the request: its reply fails to go out
  EXPECT_TRUE(AllClosed());
  EXPECT_EQ(Counter("connections_closed_protocol_error"), 0u);
}

TEST_F(ClientDepartureTest, AMalformedFrameStillIsAProtocolError) {
  std::unique_ptr<RawClient> c = Admitted(secret_a_);
  const std::string garbage(proto::kHeaderBytes, '\xff');  // no frame header (bad magic)
  ASSERT_TRUE(c->SendBytes(garbage.data(), garbage.size()));
  EXPECT_TRUE(c->WaitClosed());
  EXPECT_TRUE(AllClosed());
  EXPECT_EQ(Counter("connections_closed_protocol_error"), 1u);
}

}  // namespace
}  // namespace iorelay::daemon
