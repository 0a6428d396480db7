// iorelayd's start-up as a process (issue 45, finding 4): a second daemon on a stopped first
// one's path gives up at once with a clear line, SIGTERM ends start-up wherever it is, two
// daemons racing for a path leave exactly one listening, and a killed daemon's socket is taken
// over.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "testutil/daemon_process_testutil.h"

extern char** environ;

namespace iorelay::client {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// An iorelayd started beside `dir` (a DaemonProcess's directory, its credential and root), its
// stderr in a file; killed at the end unless it has exited.
class Iorelayd {
 public:
  Iorelayd(const DaemonProcess& dir, const std::string& name,
           const std::vector<std::string>& extra = {})
      : log_(dir.dir() + "/" + name + ".log"), ready_(dir.dir() + "/" + name + ".ready") {
    std::vector<std::string> args = {IORELAYD_PATH,
                                     "--listen",
                                     dir.address(),
                                     "--export",
                                     "/fwd=" + dir.root(),
                                     "--credential",
                                     "app=" + dir.secret_file(),
                                     "--ready-file",
                                     ready_};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 2, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (posix_spawn(&pid_, IORELAYD_PATH, &files, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&files);
  }
  ~Iorelayd() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  void Signal(int sig) const { ::kill(pid_, sig); }
  // Its wait status once it has exited within `limit`; nothing when it is still running.
  std::optional<int> ExitWithin(milliseconds limit) {
    const auto until = Clock::now() + limit;
    while (!status_) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        status_ = status;
      } else if (Clock::now() >= until) {
        break;
      } else {
        std::this_thread::sleep_for(milliseconds(5));
      }
    }
    return status_;
  }
  // Whether it listens (its ready file), waiting up to `limit`.
  bool ReadyWithin(milliseconds limit) {
    const auto until = Clock::now() + limit;
    for (;;) {
      struct stat st;
      if (::stat(ready_.c_str(), &st) == 0 && st.st_size > 0) return true;
      if (ExitWithin(milliseconds(0)) || Clock::now() >= until) return false;
      std::this_thread::sleep_for(milliseconds(5));
    }
  }
  std::string log() const { return ReadWholeFile(log_); }
  const std::string& ready_file() const { return ready_; }

 private:
  std::string log_, ready_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

class Startup : public ::testing::Test {
 protected:
  void SetUp() override {
    alarm(60);  // a hang fails the test instead of stalling CI
    if (!DaemonProcess::Available()) GTEST_SKIP() << "iorelayd not built";
  }
  void TearDown() override { alarm(0); }
  std::string SocketPath() const { return dir_.address().substr(5); }

  DaemonProcess dir_;  // the first daemon, when a test starts it; its directory in any case
};

// Connections made to `address` without being accepted until its queue refuses more (as a
// stopped daemon's fills up under its clients' retries); their descriptors.
std::vector<int> FillQueue(const std::string& socket_path) {
  struct rlimit nofile;
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  nofile.rlim_cur = nofile.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &nofile);
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, socket_path.c_str());
  std::vector<int> fds;
  for (int i = 0; i < 100'000; ++i) {
    int c = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c < 0) break;
    if (::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(c);
      break;
    }
    fds.push_back(c);
  }
  return fds;
}

TEST_F(Startup, SecondDaemonOnAStoppedOnesPathExitsAtOnce) {
  ASSERT_TRUE(dir_.Start());
  ASSERT_TRUE(dir_.Stop());
  std::vector<int> queued = FillQueue(SocketPath());
  Iorelayd second(dir_, "second");
  std::optional<int> status = second.ExitWithin(milliseconds(2000));
  for (int c : queued) ::close(c);
  dir_.Signal(SIGCONT);
  ASSERT_TRUE(status) << "the second daemon still runs after 2 s:\n" << second.log();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) != 0) << *status;
  EXPECT_NE(second.log().find("unix:" + SocketPath() + ": another daemon holds this path"),
            std::string::npos)
      << second.log();
  EXPECT_TRUE(Exists(SocketPath())) << "the first daemon's socket was removed";
}

// Start-up waits in a call that does not return (opening a FIFO nobody reads, as a hung file
// system would hold it); SIGTERM still ends it, without leaving a socket.
TEST_F(Startup, SigtermEndsAStartupThatDoesNotReturn) {
  const std::string fifo = dir_.dir() + "/trace.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Iorelayd d(dir_, "stuck", {"--trace", fifo});
  // Its first line comes just before it builds its core, where it opens the FIFO and waits.
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (d.log().find("descriptor limit") == std::string::npos && Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_FALSE(d.ExitWithin(milliseconds(200)));
  d.Signal(SIGTERM);
  std::optional<int> status = d.ExitWithin(milliseconds(2000));
  ASSERT_TRUE(status) << "SIGTERM did not end the start-up:\n" << d.log();
  EXPECT_NE(d.log().find("signal 15 during start-up"), std::string::npos) << d.log();
  EXPECT_FALSE(Exists(SocketPath()));
  EXPECT_FALSE(Exists(SocketPath() + ".lock"));
}

// SIGTERM at each moment of start-up (parsing, credentials, exports, listening, the threads,
// the ready file: a few milliseconds in all) and just after ends the daemon within 2 s and
// leaves nothing at its path.
TEST_F(Startup, SigtermAtEveryPointOfStartupEndsItCleanly) {
  for (int delay_us = 0; delay_us <= 8'000; delay_us += 250) {
    Iorelayd d(dir_, "d");
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    d.Signal(SIGTERM);
    std::optional<int> status = d.ExitWithin(milliseconds(2000));
    ASSERT_TRUE(status) << "still running 2 s after SIGTERM at " << delay_us << " us:\n" << d.log();
    EXPECT_TRUE((WIFEXITED(*status) && WEXITSTATUS(*status) == 0) ||
                (WIFSIGNALED(*status) && WTERMSIG(*status) == SIGTERM))
        << "at " << delay_us << " us: status " << *status << "\n"
        << d.log();
    EXPECT_FALSE(Exists(SocketPath())) << delay_us << " us";
    EXPECT_FALSE(Exists(SocketPath() + ".lock")) << delay_us << " us";
    EXPECT_FALSE(Exists(d.ready_file())) << delay_us << " us";
  }
}

TEST_F(Startup, TwoDaemonsRacingForAPathLeaveExactlyOne) {
  for (int round = 0; round < 5; ++round) {
    Iorelayd a(dir_, "a"), b(dir_, "b");
    bool a_ready = a.ReadyWithin(milliseconds(5000));
    bool b_ready = b.ReadyWithin(milliseconds(a_ready ? 500 : 5000));
    ASSERT_NE(a_ready, b_ready) << "round " << round << "\n" << a.log() << "\n" << b.log();
    Iorelayd& loser = a_ready ? b : a;
    Iorelayd& winner = a_ready ? a : b;
    std::optional<int> status = loser.ExitWithin(milliseconds(2000));
    ASSERT_TRUE(status) << loser.log();
    EXPECT_NE(loser.log().find("unix:" + SocketPath() + ": another daemon holds this path"),
              std::string::npos)
        << loser.log();
    winner.Signal(SIGTERM);
    ASSERT_TRUE(winner.ExitWithin(milliseconds(5000)));
    EXPECT_FALSE(Exists(SocketPath()));
  }
}

TEST_F(Startup, KilledDaemonsSocketIsTakenOver) {
  ASSERT_TRUE(dir_.Start());
  dir_.Kill();  // SIGKILL: its socket and lock file stay
  ASSERT_TRUE(Exists(SocketPath()));
  Iorelayd next(dir_, "next");
  EXPECT_TRUE(next.ReadyWithin(milliseconds(5000))) << next.log();
}

}  // namespace
}  // namespace iorelay::client
