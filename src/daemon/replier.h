// How a metadata handler answers: an error or a message, then accounting; and the decoding
// of request fields, where a malformed message closes the connection.
#pragma once

#include <fmt/core.h>

#include "daemon/core.h"

namespace iorelay::daemon {

// The reply of a handler: an error, or fields (and maybe a tail).
class Replier {
 public:
  Replier(Core& core, const ConnPtr& conn, const proto::FrameHeader& h, int64_t arrival_ns)
      : core_(core),
        conn_(conn),
        op_(static_cast<proto::Op>(h.op)),
        id_(h.id),
        arrival_ns_(arrival_ns) {}
  void Error(int err, uint64_t handle = 0) {
    conn_->ReplyError(op_, id_, err);
    Outcome o;
    o.error = err;
    o.handle = handle;
    FinishRequest(core_, *conn_, *conn_->session, op_, arrival_ns_, o);
  }
  template <typename Msg>
  void Ok(const Msg& m, uint64_t handle = 0, std::span<const uint8_t> tail = {}) {
    conn_->Reply(op_, id_, m, tail);
    Outcome o;
    o.handle = handle;
    FinishRequest(core_, *conn_, *conn_->session, op_, arrival_ns_, o);
  }
  // A well-framed request whose fields do not decode: answer EPROTO and close the connection.
  void Malformed() {
    fmt::print(stderr, "iorelayd: malformed {} request from {}; closing the connection\n",
               proto::OpName(op_), conn_->transport()->peer());
    Error(EPROTO);
    conn_->Shutdown();
  }
  void Done(const Status& s, uint64_t handle) {
    if (s.ok()) {
      Ok(proto::Empty{}, handle);
    } else {
      Error(s.code(), handle);
    }
  }

 private:
  Core& core_;
  const ConnPtr& conn_;
  proto::Op op_;
  uint64_t id_;
  int64_t arrival_ns_;
};

template <typename Msg>
bool Decode(std::span<const uint8_t> payload, Msg* m, Replier& r) {
  if (proto::DecodeFields(payload, m).ok()) return true;
  r.Malformed();
  return false;
}

}  // namespace iorelay::daemon
