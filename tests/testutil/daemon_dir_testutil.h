// The one place a test daemon's surroundings are made, whether the daemon runs inside the test
// (DaemonHarness, for tests that reach into the daemon) or as the real iorelayd binary
// (DaemonProcess, for client and interposer tests that stop, kill or preload around it): a
// fresh private directory with root/ (the exported tree), one 0600 credential per
// application, and the socket path. Everything in it is removed with it.
#pragma once

#include <string>
#include <vector>

namespace iorelay::testing {

class DaemonDir {
 public:
  // Aborts the test program when the directory or a credential cannot be made: nothing
  // after it could run.
  explicit DaemonDir(std::vector<std::string> apps);
  ~DaemonDir();
  DaemonDir(const DaemonDir&) = delete;
  DaemonDir& operator=(const DaemonDir&) = delete;

  const std::string& path() const { return path_; }
  const std::vector<std::string>& apps() const { return apps_; }
  std::string root() const { return path_ + "/root"; }
  std::string socket() const { return path_ + "/s"; }
  std::string address() const { return "unix:" + socket(); }
  std::string key_file(const std::string& app) const { return path_ + "/" + app + ".key"; }

 private:
  std::string path_;
  std::vector<std::string> apps_;
};

}  // namespace iorelay::testing
