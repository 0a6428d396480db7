// How a request is refused before it reaches its handler or the scheduler (accounting, then an
// error), and how one that breaks the protocol closes its connection.
#pragma once

#include <fmt/core.h>

#include <string>

#include "daemon/core.h"

namespace iorelay::daemon {

// The refusal of request `h`, sent at once.
class Replier {
 public:
  Replier(Core& core, const ConnPtr& conn, const proto::FrameHeader& h, int64_t arrival_ns)
      : core_(core),
        conn_(conn),
        op_(static_cast<proto::Op>(h.op)),
        id_(h.id),
        arrival_ns_(arrival_ns) {}
  Replier(const Replier&) = delete;
  Replier& operator=(const Replier&) = delete;

  void Error(int err, uint64_t handle = 0) {
    Account(err, handle);
    conn_->ReplyError(op_, id_, err);
    EndRequest(*conn_);
  }
  // A well-framed request whose fields do not decode: answer EPROTO and close the connection.
  void Malformed() {
    fmt::print(stderr, "iorelayd: malformed {} request from {}; closing the connection\n",
               proto::OpName(op_), conn_->transport()->peer());
    Close();
  }
  // A well-formed request that breaks the protocol (`why`): EPROTO, and the connection closes.
  void Violation(const std::string& why) {
    fmt::print(stderr, "iorelayd: {} request from {}: {}; closing the connection\n",
               proto::OpName(op_), conn_->transport()->peer(), why);
    Close();
  }

 private:
  void Close() {
    Error(EPROTO);  // (before the shutdown, which would drop it)
    conn_->Shutdown();
  }

  void Account(int error, uint64_t handle) {
    Outcome o;
    o.error = error;
    o.handle = handle;
    RecordRequest(core_, *conn_->session, op_, arrival_ns_, o);
  }

  Core& core_;
  const ConnPtr& conn_;
  proto::Op op_;
  uint64_t id_;
  int64_t arrival_ns_;
};

}  // namespace iorelay::daemon
