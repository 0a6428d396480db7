// Runs preload_e2e_prog under LD_PRELOAD=libiorelay_preload.so against a private iorelayd
// (tests/testutil/daemon_process_testutil.h); fails with the program's output when any of
// its checks fails (the daemon's own output goes to the test's).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <link.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "testutil/daemon_process_testutil.h"

extern char** environ;

namespace {

// A sanitizer build of the interposer needs its runtime first in the initial library list;
// this test is built the same way, so the runtime it loaded is the one to preload.
std::string SanitizerRuntime() {
  std::string found;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* out) {
        if (std::strstr(info->dlpi_name, "libasan.so") != nullptr) {
          *static_cast<std::string*>(out) = info->dlpi_name;
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

// Runs `argv` with `env` added, output to `log`; kills it after `timeout`. Returns the exit
// status (-1 when it did not exit by itself).
int RunWithTimeout(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   const std::string& log, std::chrono::seconds timeout) {
  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e) envs.emplace_back(*e);
  envs.insert(envs.end(), env.begin(), env.end());
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : envs) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  auto until = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(PreloadEndToEnd, UnmodifiedProgramThroughTheInterposer) {
  iorelay::client::DaemonProcess daemon;
  ASSERT_TRUE(daemon.Start()) << "iorelayd did not become ready";
  std::string local = daemon.dir() + "/local";
  ASSERT_EQ(::mkdir(local.c_str(), 0700), 0);
  std::string preload = PRELOAD_SO;
  std::string runtime = SanitizerRuntime();
  if (!runtime.empty()) preload = runtime + ":" + preload;
  std::string log = daemon.dir() + "/prog.log";
  int rc = RunWithTimeout(
      {E2E_PROG, "/fwd", daemon.root(), local},
      {"LD_PRELOAD=" + preload, "IORELAY_SERVERS=" + daemon.address(),
       "IORELAY_SECRET_FILE=" + daemon.secret_file(), "IORELAY_PREFIX=/fwd",
       "IORELAY_TIMEOUT_MS=5000", "IORELAY_STAGE_DIR=" + daemon.dir() + "/staged",
       std::string("E2E_DLTEST_LIB=") + DLTEST_LIB, std::string("E2E_DLTEST_DEP=") + DLTEST_DEP,
       std::string("E2E_DLTEST_PROG=") + DLTEST_PROG},
      log, std::chrono::seconds(60));
  EXPECT_EQ(rc, 0) << "preload_e2e_prog output:\n" << iorelay::client::ReadWholeFile(log);
}

}  // namespace
