// A process of another user at a daemon's Unix socket path is refused before the client sends
// it a byte (SO_PEERCRED): it could otherwise relay a live handshake to the real daemon and then
// read and change the traffic, which on a Unix socket is never sealed.
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "common/auth.h"
#include "iorelay/iorelay.h"

namespace iorelay::client {
namespace {

constexpr uid_t kNobody = 65534;

// In a child running as `uid`: listens at `path`, accepts one connection, and writes to `report`
// how many bytes the client sent within 2 s.
[[noreturn]] void Impostor(uid_t uid, const std::string& path, int ready, int report) {
  if (::setgid(uid) != 0 || ::setuid(uid) != 0) _exit(2);
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  std::snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path.c_str());
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun) != 0 ||
      ::listen(fd, 4) != 0) {
    _exit(3);
  }
  char one = 1;
  if (::write(ready, &one, 1) != 1) _exit(4);
  int total = 0;
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 5000) == 1) {
    int c = ::accept(fd, nullptr, nullptr);
    pollfd q{c, POLLIN, 0};
    char buf[256];
    ssize_t n;
    while (::poll(&q, 1, 2000) == 1 && (n = ::read(c, buf, sizeof buf)) > 0) total += int(n);
  }
  if (::write(report, &total, sizeof total) != sizeof total) _exit(5);
  _exit(0);
}

TEST(UnixPeer, AnotherUsersProcessAtTheSocketGetsNothing) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to run the impostor as another user";
  alarm(60);
  char tmpl[] = "/tmp/iorelay-peer-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);  // the impostor may create its socket here
  const std::string sock = dir + "/d0.sock", key = dir + "/job.key";
  ASSERT_TRUE(CreateSecretFile(key).ok());
  int ready[2], report[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(report), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) Impostor(kNobody, sock, ready[1], report[1]);
  char byte;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);

  ::setenv("IORELAY_SERVERS", ("unix:" + sock).c_str(), 1);
  ::setenv("IORELAY_SECRET_FILE", key.c_str(), 1);
  ::setenv("IORELAY_PREFIX", "/fwd", 1);
  ::setenv("IORELAY_TIMEOUT_MS", "1000", 1);
  int err = 0;
  iorelay_client* c = iorelay_client_from_env(&err);
  ASSERT_NE(c, nullptr) << err;
  struct stat st;
  EXPECT_EQ(iorelay_stat(c, "/fwd/x", &st, 0), -EACCES);
  iorelay_client_destroy(c);

  int received = -1;
  EXPECT_EQ(::read(report[0], &received, sizeof received), static_cast<ssize_t>(sizeof received));
  EXPECT_EQ(received, 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  for (int fd : {ready[0], ready[1], report[0], report[1]}) ::close(fd);
  ::unlink(sock.c_str());
  ::unlink(key.c_str());
  ::rmdir(dir.c_str());
  alarm(0);
}

}  // namespace
}  // namespace iorelay::client
