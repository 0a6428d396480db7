// kLock and kUnlockAll: record locks owned by the session, on files it holds open, answered
// when granted.
#include "daemon/core.h"
#include "daemon/replier.h"

namespace iorelay::daemon {
namespace {

// Sends a lock request's reply and accounts for it, whenever and wherever it comes.
LockService::Done Answer(Core& core, const ConnPtr& conn, proto::Op op, uint64_t id,
                         int64_t arrival_ns) {
  Core* core_ptr = &core;
  return [core_ptr, c = conn, op, id, arrival_ns](int err, const proto::LockReply& rep) {
    Outcome o;
    o.error = err;
    RecordRequest(*core_ptr, *c->session, op, arrival_ns, o);
    if (err != 0) {
      c->ReplyError(op, id, err);
    } else if (op == proto::Op::kLock) {
      c->Reply(op, id, rep);
    } else {
      c->Reply(op, id, proto::Empty{});
    }
    EndRequest(*c);
  };
}

}  // namespace

void HandleLockOp(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
                  std::span<const uint8_t> payload, int64_t arrival_ns) {
  Replier r(core, conn, h, arrival_ns);
  uint64_t owner = conn->session->id();
  const auto op = static_cast<proto::Op>(h.op);
  if (op == proto::Op::kUnlockAll) {
    proto::UnlockAllRequest q;
    if (!Decode(payload, &q, r)) return;
    if (core.lock_forwarder == nullptr) {
      core.locks.UnlockAll(sched::FileKey{q.dev, q.ino}, owner);
      return r.Ok(proto::Empty{});
    }
    return core.lock_forwarder->UnlockAll(owner, q, Answer(core, conn, op, h.id, arrival_ns));
  }
  proto::LockRequest q;
  if (!Decode(payload, &q, r)) return;
  // Locks only on files the session holds open, as fcntl takes them only on a descriptor: the
  // table holds nothing for files nobody here has open.
  if (!conn->session->HoldsFile(sched::FileKey{q.dev, q.ino})) return r.Error(EBADF);
  // The answer may come later, from whichever thread releases the conflicting lock (or, in a
  // relay, answers upstream).
  if (core.lock_forwarder != nullptr) {
    std::shared_ptr<OpenFile> f = conn->session->FileOf(sched::FileKey{q.dev, q.ino});
    if (f == nullptr) return r.Error(EBADF);  // closed meanwhile
    return core.lock_forwarder->Lock(owner, q, f->fd(), f->access_mode(),
                                     Answer(core, conn, op, h.id, arrival_ns));
  }
  core.locks.Lock(q, owner, Answer(core, conn, op, h.id, arrival_ns));
}

}  // namespace iorelay::daemon
