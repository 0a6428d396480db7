// A client of another protocol version is refused at hello with EPROTONOSUPPORT, in a reply the
// client can read (the hello layout never changes), and its connection is closed.
#include <gtest/gtest.h>

#include "testutil/daemon_harness_testutil.h"

namespace iorelay::daemon {
namespace {

class ProtocolVersionTest : public ::testing::Test, protected testing::DaemonHarness {
 protected:
  void SetUp() override {
    PrepareDirs();
    Start(BaseConfig());
  }
  void TearDown() override { Cleanup(); }
  // Sends a kHello frame of `version` and returns the reply.
  testing::Frame Hello(testing::RawClient& c, uint16_t version) {
    proto::FrameHeader h;
    h.op = static_cast<uint16_t>(proto::Op::kHello);
    h.id = 1;
    h.version = version;
    uint8_t bytes[proto::kHeaderBytes];
    proto::EncodeHeader(h, bytes);
    EXPECT_TRUE(c.SendBytes(bytes, sizeof bytes));
    testing::Frame f;
    EXPECT_TRUE(c.ReadFrame(&f));
    return f;
  }
};

TEST_F(ProtocolVersionTest, OlderAndNewerClientsAreRefusedWithOurVersion) {
  for (uint16_t version : {uint16_t{1}, static_cast<uint16_t>(proto::kVersion + 1)}) {
    testing::RawClient c;
    ASSERT_TRUE(c.Connect(socket_));
    testing::Frame f = Hello(c, version);
    EXPECT_EQ(f.header.status, EPROTONOSUPPORT) << "client version " << version;
    EXPECT_EQ(f.header.version, proto::kVersion);
    EXPECT_TRUE(c.WaitClosed());
  }
}

TEST_F(ProtocolVersionTest, OtherFramesOfAnotherVersionAreProtocolErrors) {
  uint8_t bytes[proto::kHeaderBytes];
  proto::FrameHeader h;
  h.op = static_cast<uint16_t>(proto::Op::kPing);
  h.version = proto::kVersion + 1;
  proto::EncodeHeader(h, bytes);
  Result<proto::FrameHeader> d = proto::DecodeHeader(bytes);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), EPROTO);
  EXPECT_NE(d.status().message().find("protocol version"), std::string::npos);
}

TEST_F(ProtocolVersionTest, SameVersionIsAdmitted) {
  auto c = Admitted(secret_a_);
  EXPECT_NE(c, nullptr);
}

}  // namespace
}  // namespace iorelay::daemon
