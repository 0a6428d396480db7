// Unix socket paths: a live daemon's socket is never taken over (not even when it is stopped, or
// when two daemons race for the path), and a listener removes only the socket and lock file it
// created. Abstract names: one listener per name and network namespace, no file.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "common/unix_address.h"
#include "daemon/transport.h"

namespace iorelay::daemon {
namespace {

class UnixSocketPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/iorelay-sock-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/s";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  bool Exists(const std::string& suffix = "") const {
    struct stat st;
    return ::lstat((path_ + suffix).c_str(), &st) == 0;
  }
  std::string dir_, path_;
};

TEST_F(UnixSocketPathTest, LiveDaemonSocketIsRefused) {
  Result<std::unique_ptr<Listener>> first = Listen("unix:" + path_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<std::unique_ptr<Listener>> second = Listen("unix:" + path_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), EADDRINUSE);
  EXPECT_NE(second.status().ToString().find("unix:" + path_ + ": another daemon holds this path"),
            std::string::npos)
      << second.status().ToString();
  first->reset();
  EXPECT_FALSE(Exists());
  EXPECT_FALSE(Exists(".lock"));
}

TEST_F(UnixSocketPathTest, StaleSocketIsReplaced) {
  // A socket file nobody listens on, as a killed daemon leaves it.
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path_.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(fd);
  ASSERT_TRUE(Exists());
  std::ofstream(path_ + ".lock") << "999999\n";  // its lock file, no longer locked
  Result<std::unique_ptr<Listener>> l = Listen("unix:" + path_);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
}

TEST_F(UnixSocketPathTest, FileThatIsNotASocketIsKept) {
  std::ofstream(path_) << "data";
  Result<std::unique_ptr<Listener>> l = Listen("unix:" + path_);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), EEXIST);
  std::ifstream in(path_);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "data");
}

TEST_F(UnixSocketPathTest, StoppingRemovesOnlyItsOwnSocket) {
  Result<std::unique_ptr<Listener>> first = Listen("unix:" + path_);
  ASSERT_TRUE(first.ok());
  // Someone removes the path and its lock file and a second daemon starts there; the first then
  // stops.
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  ASSERT_EQ(::unlink((path_ + ".lock").c_str()), 0);
  Result<std::unique_ptr<Listener>> second = Listen("unix:" + path_);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  first->reset();
  EXPECT_TRUE(Exists()) << "the first daemon removed the second one's socket";
  EXPECT_TRUE(Exists(".lock")) << "the first daemon removed the second one's lock file";
  second->reset();
  EXPECT_FALSE(Exists());
}

// Issue 45, finding 4: a listener that takes no connections (a stopped daemon whose queue is
// full) made the probe's blocking connect wait forever. It holds the path; the answer is
// immediate.
TEST_F(UnixSocketPathTest, ListenerWithAFullQueueIsRefusedAtOnce) {
  alarm(10);  // the old probe never returned
  int held = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path_.c_str());
  ASSERT_EQ(::bind(held, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(held, 0), 0);
  std::vector<int> queued;
  for (int i = 0; i < 64; ++i) {
    int c = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ASSERT_EQ(errno, EAGAIN) << std::strerror(errno);
      ::close(c);
      break;
    }
    queued.push_back(c);
  }
  const auto start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<Listener>> l = Listen("unix:" + path_);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), EADDRINUSE);
  EXPECT_NE(l.status().ToString().find("another daemon holds this path"), std::string::npos)
      << l.status().ToString();
  EXPECT_TRUE(Exists()) << "a live listener's socket was removed";
  for (int c : queued) ::close(c);
  ::close(held);
  alarm(0);
}

// Issue 45, finding 4: between the probe that found a socket stale and its removal, another
// daemon could remove it and bind there; each then thought it owned the path. With the lock,
// exactly one of the racers wins, every time.
TEST_F(UnixSocketPathTest, RacingListenersExactlyOneWins) {
  for (int round = 0; round < 50; ++round) {
    // Every other round from a stale socket, which both racers may find stale and remove.
    if (round % 2 == 1) {
      int stale = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      struct sockaddr_un addr = {};
      addr.sun_family = AF_UNIX;
      std::strcpy(addr.sun_path, path_.c_str());
      ASSERT_EQ(::bind(stale, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
      ::close(stale);
    }
    std::atomic<int> ready{0};
    Result<std::unique_ptr<Listener>> results[2] = {Status::FromErrno(EINVAL),
                                                    Status::FromErrno(EINVAL)};
    std::thread racers[2];
    for (int i = 0; i < 2; ++i) {
      racers[i] = std::thread([&, i] {
        ready.fetch_add(1);
        while (ready.load() < 2) std::this_thread::yield();
        results[i] = Listen("unix:" + path_);
      });
    }
    for (std::thread& t : racers) t.join();
    const int won = results[0].ok() + results[1].ok();
    ASSERT_EQ(won, 1) << "round " << round;
    const Status& lost = results[0].ok() ? results[1].status() : results[0].status();
    EXPECT_EQ(lost.code(), EADDRINUSE) << lost.ToString();
    EXPECT_NE(lost.ToString().find("another daemon holds this path"), std::string::npos)
        << lost.ToString();
    // The winner's socket answers, and it goes with it.
    int c = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path_.c_str());
    EXPECT_EQ(::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << round;
    ::close(c);
    results[0] = Status::FromErrno(EINVAL);
    results[1] = Status::FromErrno(EINVAL);
    ASSERT_FALSE(Exists()) << round;
  }
}

// The accepted connection's next Accept, waiting up to a second for it.
std::unique_ptr<Connection> AcceptOne(Listener& l) {
  for (int i = 0; i < 100; ++i) {
    Result<std::unique_ptr<Connection>> c = l.Accept();
    if (c.ok()) return std::move(*c);
    EXPECT_EQ(c.status().code(), EAGAIN) << c.status().ToString();
    ::usleep(10'000);
  }
  return nullptr;
}

// A connection names its client (for the close logs), not the daemon's listening address.
TEST_F(UnixSocketPathTest, ConnectionsNameTheirPeer) {
  Result<std::unique_ptr<Listener>> tcp = Listen("tcp:127.0.0.1:0");
  ASSERT_TRUE(tcp.ok()) << tcp.status().ToString();
  const std::string address = (*tcp)->address();
  const int port = std::stoi(address.substr(address.rfind(':') + 1));
  int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in to = {};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  struct sockaddr_in mine = {};
  socklen_t len = sizeof mine;
  ASSERT_EQ(::getsockname(client, reinterpret_cast<sockaddr*>(&mine), &len), 0);
  std::unique_ptr<Connection> c = AcceptOne(**tcp);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->peer(), "tcp:127.0.0.1:" + std::to_string(ntohs(mine.sin_port)));
  EXPECT_NE(c->peer(), address);
  ::close(client);

  Result<std::unique_ptr<Listener>> unix_l = Listen("unix:" + path_);
  ASSERT_TRUE(unix_l.ok()) << unix_l.status().ToString();
  client = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path_.c_str());
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  c = AcceptOne(**unix_l);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->peer(), "unix:" + path_ + " (pid " + std::to_string(::getpid()) + ", uid " +
                           std::to_string(::getuid()) + ")");
  ::close(client);
}

TEST(AbstractUnixSocket, OneListenerPerNameAndNetworkNamespaceAndNoFile) {
  const std::string name = "@iorelay-test-" + std::to_string(::getpid());
  Result<std::unique_ptr<Listener>> first = Listen("unix:" + name);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ((*first)->address(), "unix:" + name);
  Result<std::unique_ptr<Listener>> second = Listen("unix:" + name);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), EADDRINUSE);
  EXPECT_NE(second.status().ToString().find("another daemon of this host"), std::string::npos)
      << second.status().ToString();

  // A client reaches it by the same name.
  sockaddr_un addr;
  const socklen_t len = FillUnixAddress(name, &addr);
  ASSERT_GT(len, 0u);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), len), 0) << std::strerror(errno);
  Result<std::unique_ptr<Connection>> accepted = (*first)->Accept();
  EXPECT_TRUE(accepted.ok()) << accepted.status().ToString();
  ::close(fd);

  // Another network namespace (another host of the testbed) has a name of its own.
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::unshare(CLONE_NEWNET) != 0) ::_exit(77);  // not allowed here
    ::_exit(Listen("unix:" + name).ok() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) != 77) {
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the name was taken in a new network namespace";
  }

  // Closing frees the name; there was never a file to remove.
  first->reset();
  EXPECT_TRUE(Listen("unix:" + name).ok());
}

TEST(AbstractUnixSocket, BadPathsAreRefused) {
  for (const char* bad : {"unix:relative", "unix:@", "unix:"}) {
    Result<std::unique_ptr<Listener>> l = Listen(bad);
    EXPECT_FALSE(l.ok()) << bad;
  }
  EXPECT_FALSE(Listen("unix:@" + std::string(200, 'x')).ok());
}

}  // namespace
}  // namespace iorelay::daemon
