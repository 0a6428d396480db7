// Runs the real iorelayd binary for client and interposer tests, in a DaemonDir with one
// application ("app") and the export /fwd; readiness by --ready-file; always killed at the end.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "testutil/daemon_dir_testutil.h"

namespace iorelay::client {

class DaemonProcess {
 public:
  DaemonProcess();
  ~DaemonProcess();  // SIGKILL and reap; the DaemonDir removes the directory
  static bool Available();
  // Spawns the daemon and waits (<= 10 s) for its ready file. False on failure.
  bool Start(const std::vector<std::string>& extra = {});
  // Spawns an iorelayd in relay role in front of `upstream`: it exports /fwd as the upstream's
  // /fwd and takes the upstream's credential (the job's), which its clients then present.
  bool StartRelay(const std::vector<const DaemonProcess*>& upstream,
                  const std::vector<std::string>& extra = {});
  void Signal(int sig);
  // SIGSTOP, then waits until the kernel reports the daemon stopped.
  bool Stop();
  void Kill();  // SIGKILL and reap
  std::string address() const { return dir_.address(); }
  std::string root() const { return dir_.root(); }
  std::string secret_file() const {
    return secret_override_.empty() ? dir_.key_file("app") : secret_override_;
  }
  const std::string& dir() const { return dir_.path(); }
  pid_t pid() const { return pid_; }
  // Sets the client's environment for this daemon (IORELAY_SERVERS, _SECRET_FILE, _PREFIX).
  void ExportClientEnv(int timeout_ms = 5000) const;

 private:
  testing::DaemonDir dir_{{"app"}};
  std::string ready_ = dir_.path() + "/ready";
  std::string secret_override_;  // a relay's: its upstream's credential
  pid_t pid_ = -1;
  bool Spawn(const std::vector<std::string>& args);
};

// Reads a whole file of the export root (for checking what the daemon wrote).
std::string ReadWholeFile(const std::string& path);

}  // namespace iorelay::client
