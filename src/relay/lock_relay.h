// A relay's record locks, passed through: each client process (session) of the relay gets an
// upstream session of its own, created at its first lock request and ended with it, so the I/O
// node's lock table sees one owner per application process, on every compute node alike (a
// table kept in the relay could not exclude another node's ranks). Every request runs on a
// thread of its own: a F_SETLKW may wait upstream for as long as the holder keeps its lock,
// and an unlock must never queue behind such a wait. Upstream, the session opens the file at
// the lock owner (its lock anchor) before its first lock there, as the lock owner takes locks
// only on files the session holds open, and closes it after the session's unlock-all.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "daemon/lock_forwarder.h"
#include "relay/relay_backend.h"

namespace iorelay::relay {

class LockRelay : public daemon::LockForwarder {
 public:
  // `make_client` makes a new upstream client (one per session); null on failure.
  using MakeClient = std::function<ClientPtr()>;
  // The upstream path behind a relay backend fd (RelayBackend::PathOf).
  using PathOf = std::function<Result<std::string>(int fd)>;
  // At most `max_requests` lock requests in flight at once, and daemon::kMaxParkedPerOwner of
  // one session; more fail with ENOLCK, as a full lock table does locally.
  LockRelay(MakeClient make_client, PathOf path_of, int max_requests = 4096);
  ~LockRelay() override;

  void Lock(uint64_t owner, const proto::LockRequest& req, int fd, int access_mode,
            Done done) override;
  void UnlockAll(uint64_t owner, const proto::UnlockAllRequest& req, Done done) override;
  void ReleaseOwner(uint64_t owner) override;
  void CancelAll(int err) override;
  nlohmann::json StatsJson() const override;

  // A client session's upstream client and its lock anchors (lock_relay.cc).
  struct Upstream;

 private:
  struct State;
  // Runs `call` (the upstream round trip, giving an errno and a reply) on a thread of its own
  // and answers `done` with its result unless CancelAll answered first.
  void Run(uint64_t owner, Done done, std::function<int(Upstream&, proto::LockReply*)> call);

  PathOf path_of_;
  std::shared_ptr<State> state_;
};

}  // namespace iorelay::relay
