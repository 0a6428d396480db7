// Connection behaviour that needs a misbehaving daemon: liveness bound, heartbeats, refusal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "client/address.h"
#include "client/connection.h"
#include "client/internal_fds.h"
#include "proto/wire.h"
#include "testutil/fake_daemon_testutil.h"

namespace iorelay::client {
namespace {

using Clock = std::chrono::steady_clock;

class ConnectionFake : public ::testing::Test {
 protected:
  void SetUp() override {
    alarm(60);  // a hang fails the test instead of stalling CI
    secret_.fill(0x5a);
    // The fake daemons speak the socket protocol only (no shm_attach).
    ::setenv("IORELAY_SHM", "off", 1);
  }
  void TearDown() override { alarm(0); }
  Result<std::unique_ptr<Connection>> Open(const FakeDaemon& d, const Secret& s, int timeout_ms) {
    return Connection::Open(*ParseAddress(d.address()), s, Identity{1, 0, "test"}, 0, 0,
                            timeout_ms);
  }
  Secret secret_;
};

double Seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TEST_F(ConnectionFake, DaemonOfAnotherProtocolVersionIsNamed) {
  FakeDaemon d(secret_, FakeDaemon::Mode::kNextVersion);
  Result<std::unique_ptr<Connection>> c = Open(d, secret_, 2000);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), EPROTONOSUPPORT);
  const std::string next = "iorelayd speaks protocol " + std::to_string(proto::kVersion + 1);
  const std::string ours = "speaks " + std::to_string(proto::kVersion);
  EXPECT_NE(c.status().message().find(next), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find(ours), std::string::npos) << c.status().message();
}

// A process squatting on a daemon's address without the job credential: the client refuses it
// before sending a single request.
TEST_F(ConnectionFake, ImpostorDaemonIsRefusedBeforeAnyRequest) {
  FakeDaemon d(secret_, FakeDaemon::Mode::kImpostor);
  Result<std::unique_ptr<Connection>> c = Open(d, secret_, 2000);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), EACCES);
  EXPECT_NE(c.status().message().find("did not prove it holds the job credential"),
            std::string::npos)
      << c.status().message();
  EXPECT_EQ(d.requests(), 0);
}

// A sealed connection: requests carry tags the fake daemon checks (it closes on a wrong one),
// replies and heartbeats carry tags the client checks.
TEST_F(ConnectionFake, SealedConnectionCarriesTagsBothWays) {
  FakeDaemon d(secret_, FakeDaemon::Mode::kSealed);
  Result<std::unique_ptr<Connection>> c = Open(d, secret_, 2000);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::vector<uint8_t> payload;
  for (int i = 0; i < 3; ++i) {
    Result<ReplyInfo> r = (*c)->RoundTrip(proto::Op::kPing, {}, {}, &payload, {});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  char data[5000];
  std::memset(data, 'y', sizeof data);
  struct iovec iov[1] = {{data, sizeof data}};
  Result<ReplyInfo> w = (*c)->RoundTrip(
      proto::Op::kPwrite, proto::EncodeFields(proto::PwriteRequest{1, 0}), {iov, 1}, &payload, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(d.requests(), 4);
}

TEST_F(ConnectionFake, AlteredReplyFailsItsIntegrityCheck) {
  FakeDaemon d(secret_, FakeDaemon::Mode::kTampering);
  Result<std::unique_ptr<Connection>> c = Open(d, secret_, 2000);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::vector<uint8_t> payload;
  char data[100] = {};
  struct iovec iov[1] = {{data, sizeof data}};
  Result<ReplyInfo> r = (*c)->RoundTrip(
      proto::Op::kPwrite, proto::EncodeFields(proto::PwriteRequest{1, 0}), {iov, 1}, &payload, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("integrity check"), std::string::npos)
      << r.status().message();
  EXPECT_TRUE((*c)->broken());
}

TEST_F(ConnectionFake, HandshakeAndRoundTrips) {
  FakeDaemon d(secret_, FakeDaemon::Mode::kNormal);
  Result<std::unique_ptr<Connection>> c = Open(d, secret_, 2000);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->session().session, 42u);
  EXPECT_EQ((*c)->session().app, "fake");
  EXPECT_TRUE(IsInternalFd((*c)->fd()));
  EXPECT_GE((*c)->fd(), 512);
  std::vector<uint8_t> payload;
  Result<ReplyInfo> r = (*c)->RoundTrip(proto::Op::kPing, {}, {}, &payload, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 0);
  char data[10000];
  std::memset(data, 'x', sizeof data);
  struct iovec iov[2] = {{data, 4000}, {data + 4000, 6000}};
  r = (*c)->RoundTrip(proto::Op::kPwrite, proto::EncodeFields(proto::PwriteRequest{1, 0}),
                      IoSpan{iov, 2}, &payload, {});
  ASSERT_TRUE(r.ok());
  proto::CountReply count;
  ASSERT_TRUE(proto::DecodeFields(payload, &count).ok());
  EXPECT_EQ(count.count, 10000u);
}

// A daemon at --max-handshakes closes the oldest handshakes to let others in: a connection
// closed inside its handshake is made again, after 10, 40 and 160 ms, four times in all.
TEST_F(ConnectionFake, AHandshakeClosedByTheDaemonIsTriedAgain) {
  FakeDaemon d(secret_, FakeDaemon::Mode::kEvictsTwice);
  Result<std::unique_ptr<Connection>> c = Open(d, secret_, 2000);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(d.connections(), 3);
  std::vector<uint8_t> payload;
  Result<ReplyInfo> r = (*c)->RoundTrip(proto::Op::kPing, {}, {}, &payload, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 0);
}

TEST_F(ConnectionFake, AHandshakeClosedEveryTimeGivesEioAfterFourTries) {
  FakeDaemon d(secret_, FakeDaemon::Mode::kEvictsAll);
  const auto t0 = Clock::now();
  EXPECT_EQ(Open(d, secret_, 2000).status().code(), EIO);
  EXPECT_GE(Seconds(t0), 0.2);  // (10 + 40 + 160 ms between the tries)
  EXPECT_EQ(d.connections(), 4);
}

TEST_F(ConnectionFake, WrongSecretIsRefusedWithEacces) {
  FakeDaemon d(secret_, FakeDaemon::Mode::kNormal);
  Secret wrong;
  wrong.fill(1);
  EXPECT_EQ(Open(d, wrong, 2000).status().code(), EACCES);
}

TEST_F(ConnectionFake, SilentDaemonGivesEioWithinTheBound) {
  FakeDaemon d(secret_, FakeDaemon::Mode::kSilent);
  Result<std::unique_ptr<Connection>> c = Open(d, secret_, 300);
  ASSERT_TRUE(c.ok());
  auto t0 = Clock::now();
  std::vector<uint8_t> payload;
  Result<ReplyInfo> r = (*c)->RoundTrip(proto::Op::kPing, {}, {}, &payload, {});
  EXPECT_EQ(r.status().code(), EIO);
  EXPECT_GE(Seconds(t0), 0.29);
  EXPECT_LT(Seconds(t0), 1.5);
  EXPECT_TRUE((*c)->broken());
}

TEST_F(ConnectionFake, HeartbeatsKeepASlowRequestAlive) {
  FakeDaemon d(secret_, FakeDaemon::Mode::kHeartbeat, /*hold_ms=*/1200);
  Result<std::unique_ptr<Connection>> c = Open(d, secret_, 400);
  ASSERT_TRUE(c.ok());
  auto t0 = Clock::now();
  std::vector<uint8_t> payload;
  Result<ReplyInfo> r = (*c)->RoundTrip(proto::Op::kPing, {}, {}, &payload, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GE(Seconds(t0), 1.1);  // three times the liveness bound, kept alive by heartbeats
}

TEST_F(ConnectionFake, NobodyListeningGivesEioAtOnce) {
  auto t0 = Clock::now();
  Result<std::unique_ptr<Connection>> c = Connection::Open(
      *ParseAddress("unix:/tmp/iorelay-no-such.sock"), secret_, Identity{1, 0, "t"}, 0, 0, 5000);
  EXPECT_EQ(c.status().code(), EIO);
  EXPECT_LT(Seconds(t0), 0.5);
}

// A Unix listener whose backlog is full (a burst of clients, or peers that flood it): the
// connect waits for room, within its bound, instead of failing at once (a non-blocking
// connect's EAGAIN, after which nothing completes).
TEST_F(ConnectionFake, AFullBacklogIsWaitedForWithinTheBound) {
  char dir[] = "/tmp/iorbacklogXXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/s";
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  std::strcpy(sun.sun_path, path.c_str());
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&sun), sizeof sun), 0);
  ASSERT_EQ(::listen(listener, 0), 0);
  std::vector<int> queued;  // connects the listener never takes, until its backlog is full
  for (;;) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun) != 0) {
      ASSERT_EQ(errno, EAGAIN);
      ::close(fd);
      break;
    }
    queued.push_back(fd);
    ASSERT_LT(queued.size(), 64u);
  }
  const Address addr = *ParseAddress("unix:" + path);
  auto t0 = Clock::now();
  Result<int> late = ConnectSocket(addr, 300);  // no room comes
  EXPECT_FALSE(late.ok());
  EXPECT_GE(Seconds(t0), 0.25);
  std::thread taker([listener] {  // room comes after 300 ms
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::close(::accept(listener, nullptr, nullptr));
  });
  t0 = Clock::now();
  Result<int> fd = ConnectSocket(addr, 5000);
  taker.join();
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  EXPECT_GE(Seconds(t0), 0.25);
  EXPECT_LT(Seconds(t0), 4.0);
  // Non-blocking again, as every connection of the client is.
  EXPECT_NE(syscall(SYS_fcntl, *fd, F_GETFL) & O_NONBLOCK, 0);
  ::close(*fd);
  for (int q : queued) ::close(q);
  ::close(listener);
  ::unlink(path.c_str());
  ::rmdir(dir);
}

}  // namespace
}  // namespace iorelay::client
