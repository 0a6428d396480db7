// One daemon as the client sees it: the process's session there and a pool of connections
// that joined it.
//
// Why a pool and not one multiplexed connection with a reader thread: with a pool a thread
// sends and receives on its own socket, so a round trip costs sendmsg+poll+recv(+recv for
// bulk data) and no thread hand-off. A reader thread adds two futex wake-ups and two context
// switches per request, which on a 2-core node competes with the daemon for the same cores.
// Measured (2 cores shared with other builds, load average ~14; daemon --backend null, unix
// socket): `build/bench/request_rate /fwd/x 8 5 4096` gave 35,000-46,000 requests/s, with
// ~16 us of client CPU per request (90% kernel: sendmsg, poll, recv and the wake-ups) and
// ~15 us in the daemon; user-space client work is ~1.5 us. The kernel cost is the same for
// a reader thread, which would add its hand-offs on top, so the pool is the cheaper design.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "client/address.h"
#include "client/connection.h"
#include "common/mutex.h"

namespace iorelay::client {

class Server;

// A connection taken from a Server's pool; returned (or dropped when broken) on destruction.
class Lease {
 public:
  Lease(Server* server, Connection* conn) : server_(server), conn_(conn) {}
  Lease(Lease&& o) noexcept : server_(o.server_), conn_(o.conn_) { o.conn_ = nullptr; }
  Lease& operator=(Lease&&) = delete;
  ~Lease();
  Connection* operator->() const { return conn_; }
  Connection& operator*() const { return *conn_; }

 private:
  Server* server_;
  Connection* conn_;
};

class Server {
 public:
  Server(Address addr, const Secret* secret, Identity who, int timeout_ms, int max_connections,
         int spin_us, bool seal);
  ~Server();

  // An idle connection, or a new one that joins the session (or starts it). If the session
  // is gone (restarted daemon), a new one is started and session() changes. Errors: EIO
  // (unreachable, refused, timed out), or the daemon's refusal (EACCES for a wrong secret).
  Result<Lease> Acquire();
  // As Acquire, but EAGAIN instead of waiting when every allowed connection is in use.
  Result<Lease> TryAcquire();

  // The current session (session id 0: none yet).
  SessionInfo session() const;
  const Address& address() const { return addr_; }

  // Moves the internal descriptor `fd` if one of this server's connections has it.
  // Returns true if found (then *err is 0 or an errno).
  bool RelocateFd(int fd, int* err);

  // Fork child: abandons every connection (raw close, nothing sent), forgets the session
  // and returns the parent's, for kAdopt. Other parent threads do not exist in the child,
  // so locks are re-created rather than taken.
  SessionInfo ForgetAfterFork(uint32_t child_pid) NO_THREAD_SAFETY_ANALYSIS;

 private:
  friend class Lease;
  void Release(Connection* conn);
  Result<Lease> Take(bool wait);
  Result<std::unique_ptr<Connection>> Connect();

  const Address addr_;
  const Secret* secret_;
  Identity who_;  // pid changes in a fork child
  const int timeout_ms_;
  const int spin_us_;
  const bool seal_;
  const int max_connections_;

  mutable Mutex mu_;
  CondVar cv_;
  SessionInfo session_ GUARDED_BY(mu_);
  std::vector<Connection*> idle_ GUARDED_BY(mu_);
  std::vector<Connection*> all_ GUARDED_BY(mu_);  // owns them
  int connecting_ GUARDED_BY(mu_) = 0;
  uint64_t generations_ GUARDED_BY(mu_) = 0;  // sessions started so far
  Mutex establish_mu_ ACQUIRED_BEFORE(mu_);   // serialises starting a session
};

}  // namespace iorelay::client
