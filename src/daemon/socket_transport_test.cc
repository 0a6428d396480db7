// Unix socket paths: a live daemon's socket is never taken over, and a listener removes only the
// socket it created. Abstract names: one listener per name and network namespace, no file.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

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
  bool Exists() const {
    struct stat st;
    return ::lstat(path_.c_str(), &st) == 0;
  }
  std::string dir_, path_;
};

TEST_F(UnixSocketPathTest, LiveDaemonSocketIsRefused) {
  Result<std::unique_ptr<Listener>> first = Listen("unix:" + path_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<std::unique_ptr<Listener>> second = Listen("unix:" + path_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), EADDRINUSE);
  EXPECT_NE(second.status().ToString().find("another daemon is listening"), std::string::npos);
  first->reset();
  EXPECT_FALSE(Exists());
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
  // Someone removes the path and a second daemon starts there; the first then stops.
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  Result<std::unique_ptr<Listener>> second = Listen("unix:" + path_);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  first->reset();
  EXPECT_TRUE(Exists()) << "the first daemon removed the second one's socket";
  second->reset();
  EXPECT_FALSE(Exists());
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
