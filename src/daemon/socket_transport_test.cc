// Unix socket paths: a live daemon's socket is never taken over, and a listener removes only the
// socket it created.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace iorelay::daemon
