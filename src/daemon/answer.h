// What an op's handler answers, typed by its row's reply message: an Answer it returns (file
// and path ops), or an AnswerLater it calls when the answer comes (lock ops). The generic code
// of op_table.cc sends either, with the request's accounting.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "daemon/core.h"

namespace iorelay::daemon {

// A refusal: errno `error` (and, for the trace, the handle the request named).
struct Refusal {
  int error;
  uint64_t handle = 0;
  std::string message;  // sent as the reply's tail when not empty (the admin ops say why)
};
inline Refusal Error(int error, uint64_t handle = 0) { return Refusal{error, handle}; }
inline Refusal Error(const Status& s, uint64_t handle = 0) { return Refusal{s.code(), handle}; }
// A refusal that tells the client why: the status's message goes with the errno.
inline Refusal Explained(const Status& s) { return Refusal{s.code(), 0, s.message()}; }

// A reply whose fields are `Fields` (the row's Reply), or a refusal. It is sent after the handler
// has returned, so that the handler's references to an open file are gone by then: a close the
// client sends on seeing the reply finds its own reference the last and reports the backend's
// close error (OpenFile::Release).
template <class Fields>
struct Answer {
  Answer(Fields f, uint64_t h = 0, std::string t = {})
      : handle(h), fields(std::move(f)), tail(std::move(t)) {}
  // NOLINTNEXTLINE: a refusal is an answer
  Answer(Refusal r) : error(r.error), handle(r.handle), tail(std::move(r.message)) {}

  int error = 0;
  uint64_t handle = 0;  // for the trace
  Fields fields{};
  std::string tail;  // bulk data after the fields (kStats, kReadlink)
};

// The answer of a backend call that returns no data.
inline Answer<proto::Empty> Done(const Status& s, uint64_t handle = 0) {
  if (s.ok()) return Answer<proto::Empty>(proto::Empty{}, handle);
  return Error(s, handle);
}

// Sends `a` as the reply to request `h`, counted (RecordRequest) before it goes and ended
// (EndRequest) after.
template <class Fields>
void SendAnswer(Core& core, const ConnPtr& conn, const proto::FrameHeader& h, int64_t arrival_ns,
                const Answer<Fields>& a) {
  const auto op = static_cast<proto::Op>(h.op);
  Outcome o;
  o.error = a.error;
  o.handle = a.handle;
  RecordRequest(core, *conn->session, op, arrival_ns, o);
  if (a.error != 0) {
    conn->Send(op, h.id, a.error, {},
               {reinterpret_cast<const uint8_t*>(a.tail.data()), a.tail.size()});
  } else {
    conn->Reply(op, h.id, a.fields,
                {reinterpret_cast<const uint8_t*>(a.tail.data()), a.tail.size()});
  }
  EndRequest(*conn);
}

// The reply to a request answered later, from whichever thread has it (a lock granted when
// another is released, or a relay's answer from upstream). Copyable; call it once.
template <class Fields>
class AnswerLater {
 public:
  AnswerLater(Core& core, ConnPtr conn, const proto::FrameHeader& h, int64_t arrival_ns)
      : core_(&core), conn_(std::move(conn)), header_(h), arrival_ns_(arrival_ns) {}

  void operator()(const Answer<Fields>& a) const {
    SendAnswer(*core_, conn_, header_, arrival_ns_, a);
  }
  // The lock service's callback shape (LockService::Done): errno, or 0 and the fields.
  void operator()(int error, const Fields& fields) const {
    error != 0 ? (*this)(Error(error)) : (*this)(Answer<Fields>(fields));
  }

 private:
  Core* core_;
  ConnPtr conn_;
  proto::FrameHeader header_;
  int64_t arrival_ns_;
};

}  // namespace iorelay::daemon
