// Spawning and reaping iorelayd for tests; nothing here runs inside the client.
#include "testutil/daemon_process_testutil.h"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace iorelay::client {

bool DaemonProcess::Available() { return ::access(IORELAYD_PATH, X_OK) == 0; }

DaemonProcess::DaemonProcess() = default;

DaemonProcess::~DaemonProcess() { Kill(); }

bool DaemonProcess::Start(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {IORELAYD_PATH,
                                   "--listen",
                                   address(),
                                   "--export",
                                   "/fwd=" + root(),
                                   "--credential",
                                   "app=" + secret_file(),
                                   "--ready-file",
                                   ready_};
  args.insert(args.end(), extra.begin(), extra.end());
  return Spawn(args);
}

bool DaemonProcess::StartRelay(const std::vector<const DaemonProcess*>& upstream,
                               const std::vector<std::string>& extra) {
  secret_override_ = upstream.at(0)->secret_file();
  std::vector<std::string> args = {IORELAYD_PATH,  "--role",       "relay",
                                   "--listen",     address(),      "--export",
                                   "/fwd=/fwd",    "--credential", "app=" + secret_override_,
                                   "--ready-file", ready_};
  for (const DaemonProcess* u : upstream) {
    args.push_back("--upstream");
    args.push_back(u->address());
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return Spawn(args);
}

bool DaemonProcess::Spawn(const std::vector<std::string>& spawn_args) {
  ::unlink(ready_.c_str());
  std::vector<std::string> args = spawn_args;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawn(&pid_, IORELAYD_PATH, nullptr, nullptr, argv.data(), environ) != 0) return false;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    struct stat st;
    if (::stat(ready_.c_str(), &st) == 0 && st.st_size > 0) return true;
    int status;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void DaemonProcess::Signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

bool DaemonProcess::Stop() {
  Signal(SIGSTOP);
  for (int i = 0; i < 500; ++i) {
    std::string stat = ReadWholeFile("/proc/" + std::to_string(pid_) + "/stat");
    size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'T') {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

void DaemonProcess::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void DaemonProcess::ExportClientEnv(int timeout_ms) const {
  ::setenv("IORELAY_SERVERS", address().c_str(), 1);
  ::setenv("IORELAY_SECRET_FILE", secret_file().c_str(), 1);
  ::setenv("IORELAY_PREFIX", "/fwd", 1);
  ::setenv("IORELAY_TIMEOUT_MS", std::to_string(timeout_ms).c_str(), 1);
  ::unsetenv("IORELAY_FALLBACK");
  ::unsetenv("IORELAY_DIRECT_ROOT");
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace iorelay::client
