// One client connection as the daemon sees it: the transport, the reply lock, the count of
// requests in flight (for heartbeats) and the session it was admitted to.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "daemon/session.h"
#include "daemon/transport.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace iorelay::daemon {

class ClientConn {
 public:
  explicit ClientConn(std::unique_ptr<Connection> transport) : transport_(std::move(transport)) {}

  Connection* transport() { return transport_.get(); }

  // Sends one reply frame (op with kReplyBit) under the send lock. A failed send shuts
  // the connection down; later sends are dropped.
  void Send(proto::Op op, uint64_t id, int32_t status, std::span<const uint8_t> fields,
            std::span<const uint8_t> tail = {});
  template <typename Msg>
  void Reply(proto::Op op, uint64_t id, const Msg& msg, std::span<const uint8_t> tail = {}) {
    std::vector<uint8_t>& fields = ScratchFields();
    proto::Writer w(&fields);
    w(msg);
    Send(op, id, 0, fields, tail);
  }
  // A per-thread, emptied vector whose capacity is reused by every reply of the thread.
  static std::vector<uint8_t>& ScratchFields();
  void ReplyError(proto::Op op, uint64_t id, int err) { Send(op, id, err, {}); }
  void SendHeartbeat();

  void Shutdown() {
    closed_.store(true);
    transport_->Shutdown();
  }
  bool closed() const { return closed_.load(); }

  // Requests received and not yet answered.
  std::atomic<int> outstanding{0};
  // Set once by the reader thread at authentication, before any request is queued.
  std::shared_ptr<Session> session;

 private:
  std::unique_ptr<Connection> transport_;
  std::mutex send_mu_;
  std::atomic<bool> closed_{false};
};

}  // namespace iorelay::daemon
