// Runs a real iorelayd for client tests: private temp dir, export /fwd, a 0600 credential,
// readiness by --ready-file; always killed at the end.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace iorelay::client {

class DaemonProcess {
 public:
  DaemonProcess();   // creates the temp dir, credential and export root
  ~DaemonProcess();  // SIGKILL, reap, remove the temp dir
  static bool Available();
  // Spawns the daemon and waits (<= 10 s) for its ready file. False on failure.
  bool Start(const std::vector<std::string>& extra = {});
  void Signal(int sig);
  // SIGSTOP, then waits until the kernel reports the daemon stopped.
  bool Stop();
  void Kill();  // SIGKILL and reap
  std::string address() const { return "unix:" + dir_ + "/d.sock"; }
  const std::string& root() const { return root_; }
  const std::string& secret_file() const { return secret_; }
  const std::string& dir() const { return dir_; }
  // Sets the client's environment for this daemon (IORELAY_SERVERS, _SECRET_FILE, _PREFIX).
  void ExportClientEnv(int timeout_ms = 5000) const;

 private:
  std::string dir_, root_, secret_, ready_;
  pid_t pid_ = -1;
};

// Reads a whole file of the export root (for checking what the daemon wrote).
std::string ReadWholeFile(const std::string& path);

}  // namespace iorelay::client
