// kLock and kUnlockAll: record locks owned by the session, on files it holds open, answered
// when granted.
#include "daemon/op_handlers.h"

namespace iorelay::daemon {

void HandleUnlockAll(Core& core, Session& session, const proto::UnlockAllRequest& q,
                     AnswerLater<proto::Empty> answer) {
  if (core.lock_forwarder == nullptr) {
    core.locks.UnlockAll(sched::FileKey{q.dev, q.ino}, session.id());
    return answer(proto::Empty{});
  }
  core.lock_forwarder->UnlockAll(
      session.id(), q, [answer](int err, const proto::LockReply&) { answer(err, proto::Empty{}); });
}

void HandleLock(Core& core, Session& session, const proto::LockRequest& q,
                AnswerLater<proto::LockReply> answer) {
  // Locks only on files the session holds open, as fcntl takes them only on a descriptor: the
  // table holds nothing for files nobody here has open.
  if (!session.HoldsFile(sched::FileKey{q.dev, q.ino})) return answer(Error(EBADF));
  // The answer may come later, from whichever thread releases the conflicting lock (or, in a
  // relay, answers upstream).
  if (core.lock_forwarder != nullptr) {
    std::shared_ptr<OpenFile> f = session.FileOf(sched::FileKey{q.dev, q.ino});
    if (f == nullptr) return answer(Error(EBADF));  // closed meanwhile
    return core.lock_forwarder->Lock(session.id(), q, f->fd(), f->access_mode(), std::move(answer));
  }
  // The ranges of all the job's sessions count against its share (max_locks, set at admission).
  const Job& job = session.job();
  core.locks.Lock(q, session.id(), std::move(answer), LockShare{job.app(), job.shares().max_locks});
}

}  // namespace iorelay::daemon
