// Record locks that a relay does not serve itself: a lock table on one compute node cannot
// exclude the ranks of another, so a relay passes each lock request upstream on behalf of the
// client process (session) that made it, keeping one owner per application process.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>

#include "proto/messages.h"

namespace iorelay::daemon {

class LockForwarder {
 public:
  virtual ~LockForwarder() = default;
  // Called exactly once per request, maybe later and from another thread (a F_SETLKW waits
  // upstream), never with a lock of the caller's held.
  using Done = std::function<void(int err, const proto::LockReply& reply)>;
  // kLock for session `owner` (pid: the client process, for F_GETLK answers elsewhere), which
  // holds the file open here as backend fd `fd` with access mode `access_mode` (upstream, the
  // lock owner takes locks only on files the session there holds open too).
  virtual void Lock(uint64_t owner, const proto::LockRequest& req, int fd, int access_mode,
                    Done done) = 0;
  // kUnlockAll (release on close) for session `owner`; done's reply is empty.
  virtual void UnlockAll(uint64_t owner, const proto::UnlockAllRequest& req, Done done) = 0;
  // The session ended: its upstream locks go, its waits end.
  virtual void ReleaseOwner(uint64_t owner) = 0;
  // Shutdown: every wait not yet answered ends with `err`; later upstream answers are dropped.
  virtual void CancelAll(int err) = 0;
  // Counters for `iorelay stats` ("locks_forwarded", ...).
  virtual nlohmann::json StatsJson() const = 0;
};

}  // namespace iorelay::daemon
