// A man in the middle for sealing tests: a TCP proxy between a client and iorelayd that
// forwards frame by frame and can flip one byte of one frame, in the handshake or after it,
// or switch sealing off in the auth reply, as an attacker on the nodes' network could.
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
    // On every connection (so that a client's new attempt meets it too):
    kSealedOff,         // the auth reply's `sealed` field set to 0 (a downgrade)
    kHandshakeByte,     // byte `offset` of the handshake's frames (hello, auth; headers included)
                        // in one direction
    kTagOfferStripped,  // the auth request's offer of AES-GMAC taken out (seal_wanted's bit 1)
    kTagDowngraded,     // the auth reply's choice of AES-GMAC (`sealed` 2) turned to Poly1305 (1)
  };
  // Listens on 127.0.0.1 (a free port) and forwards every connection to `target`
  // ("tcp:HOST:PORT"). Aborts the test program when it cannot listen. `to_daemon` and
  // `offset` say which handshake byte kHandshakeByte flips.
  MitmProxy(std::string target, Tamper tamper, bool to_daemon = false, size_t offset = 0);
  ~MitmProxy();  // closes every socket and joins the threads
  MitmProxy(const MitmProxy&) = delete;
  MitmProxy& operator=(const MitmProxy&) = delete;

  std::string address() const { return "tcp:127.0.0.1:" + std::to_string(port_); }
  // The daemon's auth reply said "sealed" (on the last connection that authenticated).
  bool sealed() const { return sealed_.load(); }
  // Its `sealed` value: the tag algorithm chosen (common/frame_mac.h's TagAlgorithm), 0 none.
  uint32_t tag_algorithm() const { return tag_algorithm_.load(); }
  // Frames altered so far (at most one after the handshake; one per connection in it).
  int tampered() const { return tampered_.load(); }
  // Heartbeat frames the daemon sent.
  int heartbeats() const { return heartbeats_.load(); }
  // Frames the client sent after its hello and auth, kFinished aside: its requests.
  int requests() const { return requests_.load(); }
  // Bytes of the handshake frames in each direction (to size a kHandshakeByte sweep).
  size_t handshake_bytes(bool to_daemon) const { return handshake_bytes_[to_daemon].load(); }

 private:
  // One direction of one connection: reads frames from `from`, forwards them to `to`.
  void Pump(int from, int to, bool to_daemon);
  void AcceptLoop();

  std::string target_;
  Tamper tamper_;
  bool tamper_to_daemon_;
  size_t tamper_offset_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> sealed_{false};
  std::atomic<uint32_t> tag_algorithm_{0};
  std::atomic<int> tampered_{0};
  std::atomic<int> heartbeats_{0};
  std::atomic<int> requests_{0};
  std::atomic<size_t> handshake_bytes_[2] = {0, 0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> fds_;            // guarded by mu_
  std::vector<std::thread> pumps_;  // guarded by mu_
};

}  // namespace iorelay::testing
