// A small raw protocol client for daemon tests: frames encoded with proto, no client
// library, so tests can also send malformed frames.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/auth.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace iorelay::daemon::testing {

struct Frame {
  proto::FrameHeader header;
  std::vector<uint8_t> payload;
};

class RawClient {
 public:
  ~RawClient();
  bool Connect(const std::string& unix_path);
  bool SendBytes(const void* data, size_t n);
  bool SendFrame(proto::Op op, uint64_t id, const std::vector<uint8_t>& fields,
                 const std::vector<uint8_t>& tail = {});
  // The next frame; heartbeats are skipped (and counted) unless `keep_heartbeats`.
  // False on EOF, error, or after `timeout_ms`.
  bool ReadFrame(Frame* f, int timeout_ms = 5000, bool keep_heartbeats = false);
  // True when the daemon closed the connection (EOF) within `timeout_ms`.
  bool WaitClosed(int timeout_ms = 5000);
  // kHello + kAuth with `secret`, then kFinished once the daemon's proof checks: the status of
  // the auth reply (0 = admitted), or -1 (transport, malformed reply, wrong daemon proof).
  int Handshake(const Secret& secret, proto::AuthReply* reply = nullptr, uint64_t join = 0,
                uint64_t token = 0);
  // Sends a request and waits for its reply.
  bool Call(proto::Op op, const std::vector<uint8_t>& fields, Frame* reply,
            const std::vector<uint8_t>& tail = {});
  int heartbeats() const { return heartbeats_; }
  int fd() const { return fd_; }

 private:
  bool ReadExact(void* dst, size_t n, int timeout_ms);
  int fd_ = -1;
  uint64_t next_id_ = 1;
  int heartbeats_ = 0;
};

}  // namespace iorelay::daemon::testing
