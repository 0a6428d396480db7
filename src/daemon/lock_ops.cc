// kLock and kUnlockAll: record locks owned by the session, on files it holds open, answered
// when granted.
#include "daemon/core.h"
#include "daemon/replier.h"

namespace iorelay::daemon {

void HandleLockOp(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
                  std::span<const uint8_t> payload, int64_t arrival_ns) {
  Replier r(core, conn, h, arrival_ns);
  uint64_t owner = conn->session->id();
  if (static_cast<proto::Op>(h.op) == proto::Op::kUnlockAll) {
    proto::UnlockAllRequest q;
    if (!Decode(payload, &q, r)) return;
    core.locks.UnlockAll(sched::FileKey{q.dev, q.ino}, owner);
    return r.Ok(proto::Empty{});
  }
  proto::LockRequest q;
  if (!Decode(payload, &q, r)) return;
  // Locks only on files the session holds open, as fcntl takes them only on a descriptor: the
  // table holds nothing for files nobody here has open.
  if (!conn->session->HoldsFile(sched::FileKey{q.dev, q.ino})) return r.Error(EBADF);
  // The answer may come later, from whichever thread releases the conflicting lock.
  ConnPtr c = conn;
  Core* core_ptr = &core;
  uint64_t id = h.id;
  core.locks.Lock(q, owner, [core_ptr, c, id, arrival_ns](int err, const proto::LockReply& rep) {
    if (err != 0) {
      c->ReplyError(proto::Op::kLock, id, err);
    } else {
      c->Reply(proto::Op::kLock, id, rep);
    }
    Outcome o;
    o.error = err;
    FinishRequest(*core_ptr, *c, *c->session, proto::Op::kLock, arrival_ns, o);
  });
}

}  // namespace iorelay::daemon
