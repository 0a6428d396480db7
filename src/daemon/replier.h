// How a metadata handler answers: accounting, then an error or a message; and the decoding
// of request fields, where a malformed message closes the connection.
#pragma once

#include <fmt/core.h>

#include <optional>
#include <span>
#include <vector>

#include "daemon/core.h"

namespace iorelay::daemon {

// The reply of a handler: an error, or fields (and maybe a tail). A Replier made `deferred`
// holds its reply until it is destroyed (or Flush): the handler's references to an open file,
// taken after it, are gone by then, so that a close the client sends on seeing the reply finds
// its own reference the last and reports the backend's close error (OpenFile::Release).
class Replier {
 public:
  Replier(Core& core, const ConnPtr& conn, const proto::FrameHeader& h, int64_t arrival_ns,
          bool deferred = false)
      : core_(core),
        conn_(conn),
        op_(static_cast<proto::Op>(h.op)),
        id_(h.id),
        arrival_ns_(arrival_ns),
        deferred_(deferred) {}
  ~Replier() { Flush(); }
  Replier(const Replier&) = delete;
  Replier& operator=(const Replier&) = delete;

  void Error(int err, uint64_t handle = 0) {
    if (!deferred_) {
      Account(err, handle);
      conn_->ReplyError(op_, id_, err);
      return EndRequest(*conn_);
    }
    pending_ = Pending{err, handle};
    fields_.clear();
    tail_.clear();
  }
  template <typename Msg>
  void Ok(const Msg& m, uint64_t handle = 0, std::span<const uint8_t> tail = {}) {
    if (!deferred_) {
      Account(0, handle);
      conn_->Reply(op_, id_, m, tail);
      return EndRequest(*conn_);
    }
    pending_ = Pending{0, handle};
    fields_.clear();
    proto::Writer w(&fields_);
    w(m);
    tail_.assign(tail.begin(), tail.end());
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
  void Done(const Status& s, uint64_t handle) {
    if (s.ok()) {
      Ok(proto::Empty{}, handle);
    } else {
      Error(s.code(), handle);
    }
  }
  // Sends the reply held back, if any, and accounts for the request.
  void Flush() {
    if (!pending_) return;
    const Pending p = *pending_;
    pending_.reset();
    Account(p.error, p.handle);
    conn_->Send(op_, id_, p.error, fields_, tail_);
    EndRequest(*conn_);
  }

 private:
  void Close() {
    Error(EPROTO);
    Flush();  // (before the shutdown, which would drop it)
    conn_->Shutdown();
  }

  void Account(int error, uint64_t handle) {
    Outcome o;
    o.error = error;
    o.handle = handle;
    RecordRequest(core_, *conn_->session, op_, arrival_ns_, o);
  }

  struct Pending {
    int error;
    uint64_t handle;
  };
  Core& core_;
  const ConnPtr& conn_;
  proto::Op op_;
  uint64_t id_;
  int64_t arrival_ns_;
  bool deferred_;
  std::optional<Pending> pending_;
  std::vector<uint8_t> fields_;
  std::vector<uint8_t> tail_;
};

template <typename Msg>
bool Decode(std::span<const uint8_t> payload, Msg* m, Replier& r) {
  if (proto::DecodeFields(payload, m).ok()) return true;
  r.Malformed();
  return false;
}

}  // namespace iorelay::daemon
