// A man in the middle for sealing tests: a TCP proxy between a client and iorelayd that
// forwards frame by frame and can flip one byte of one frame after the handshake, as an
// attacker on the nodes' network could.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace iorelay::testing {

class MitmProxy {
 public:
  enum class Tamper {
    kNone,
    kWriteData,  // the last data byte of the first pwrite request
    kReadData,   // the last data byte of the first successful pread reply
  };
  // Listens on 127.0.0.1 (a free port) and forwards every connection to `target`
  // ("tcp:HOST:PORT"). Aborts the test program when it cannot listen.
  MitmProxy(std::string target, Tamper tamper);
  ~MitmProxy();  // closes every socket and joins the threads
  MitmProxy(const MitmProxy&) = delete;
  MitmProxy& operator=(const MitmProxy&) = delete;

  std::string address() const { return "tcp:127.0.0.1:" + std::to_string(port_); }
  // The daemon's auth reply said "sealed" (on the last connection that authenticated).
  bool sealed() const { return sealed_.load(); }
  // Bytes flipped so far (at most one).
  int tampered() const { return tampered_.load(); }
  // Heartbeat frames the daemon sent.
  int heartbeats() const { return heartbeats_.load(); }

 private:
  // One direction of one connection: reads frames from `from`, forwards them to `to`.
  void Pump(int from, int to, bool to_daemon);
  void AcceptLoop();

  std::string target_;
  Tamper tamper_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> sealed_{false};
  std::atomic<int> tampered_{0};
  std::atomic<int> heartbeats_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> fds_;            // guarded by mu_
  std::vector<std::thread> pumps_;  // guarded by mu_
};

}  // namespace iorelay::testing
