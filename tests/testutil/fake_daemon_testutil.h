// A tiny in-process stand-in for iorelayd, for client tests that need a daemon to misbehave
// on purpose (stay silent, only heartbeat, refuse) — things a real daemon cannot be asked to do.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common/auth.h"

namespace iorelay::client {

class FakeDaemon {
 public:
  enum class Mode {
    kNormal,       // answers hello, auth, ping, pwrite
    kSilent,       // authenticates, then never answers a request
    kHeartbeat,    // answers a request only after hold_ms, sending heartbeats meanwhile
    kNextVersion,  // a daemon of protocol kVersion + 1: refuses the hello
    kImpostor,     // holds no secret: takes any proof, answers with a wrong one
    kSealed,       // seals the connection (frame tags both ways, common/frame_mac.h)
    kTampering,    // seals it, then flips one bit of every reply's payload (a man in the middle)
    kEvictsTwice,  // closes its first two connections at their hello, as a daemon at
                   // --max-handshakes making room for others; then as kNormal
    kEvictsAll,    // closes every connection at its hello
  };
  FakeDaemon(const Secret& secret, Mode mode, int hold_ms = 0);
  ~FakeDaemon();
  std::string address() const { return "unix:" + path_; }
  // Frames received after the handshake (requests, data), over all connections.
  int requests() const { return requests_.load(); }
  // Connections accepted.
  int connections() const { return connections_.load(); }

 private:
  void AcceptLoop();
  void Serve(int fd);

  Secret secret_;
  Mode mode_;
  int hold_ms_;
  std::string dir_, path_;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::atomic<int> connections_{0};
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

}  // namespace iorelay::client
