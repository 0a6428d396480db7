// The per-daemon connection pool and session life cycle (start, join, restart, fork).
#include "client/server.h"

#include <algorithm>
#include <new>

#include "client/internal_fds.h"

namespace iorelay::client {

Lease::~Lease() {
  if (conn_) server_->Release(conn_);
}

Server::Server(Address addr, const Secret* secret, Identity who, int timeout_ms,
               int max_connections, int spin_us, bool seal)
    : addr_(std::move(addr)),
      secret_(secret),
      who_(std::move(who)),
      timeout_ms_(timeout_ms),
      spin_us_(spin_us),
      seal_(seal),
      max_connections_(max_connections) {}

Server::~Server() {
  for (Connection* c : all_) delete c;
}

SessionInfo Server::session() const {
  MutexLock l(mu_);
  return session_;
}

Result<Lease> Server::Acquire() { return Take(/*wait=*/true); }

Result<Lease> Server::TryAcquire() { return Take(/*wait=*/false); }

Result<Lease> Server::Take(bool wait) {
  {
    MutexLock l(mu_);
    for (;;) {
      if (!idle_.empty()) {
        Connection* c = idle_.back();
        idle_.pop_back();
        return Lease(this, c);
      }
      if (static_cast<int>(all_.size()) + connecting_ < max_connections_) break;
      if (!wait) return Status::FromErrno(EAGAIN, "every connection to the daemon is in use");
      cv_.Wait(mu_);
    }
    ++connecting_;
  }
  Result<std::unique_ptr<Connection>> c = Connect();
  MutexLock l(mu_);
  --connecting_;
  if (!c.ok()) {
    cv_.NotifyOne();
    return c.status();
  }
  Connection* raw = c->release();
  all_.push_back(raw);
  return Lease(this, raw);
}

Result<std::unique_ptr<Connection>> Server::Connect() {
  for (int attempt = 0; attempt < 2; ++attempt) {
    SessionInfo s = session();
    if (s.session == 0) {
      MutexLock e(establish_mu_);
      s = session();
      if (s.session == 0) {  // this thread starts the session; others wait on establish_mu_
        Result<std::unique_ptr<Connection>> c =
            Connection::Open(addr_, *secret_, who_, 0, 0, timeout_ms_, spin_us_, seal_);
        if (c.ok()) {
          MutexLock l(mu_);
          (*c)->set_generation(++generations_);
          session_ = (*c)->session();
        }
        return c;
      }
    }
    Result<std::unique_ptr<Connection>> c =
        Connection::Open(addr_, *secret_, who_, s.session, s.token, timeout_ms_, spin_us_, seal_);
    if (c.ok()) (*c)->set_generation(s.generation);
    if (c.ok() || c.status().code() == EIO) return c;
    // The daemon refused the join: it no longer knows the session (it was restarted).
    // Forget it, and its connections, and start a new one; files of the old one are stale.
    std::vector<Connection*> dead;
    {
      MutexLock l(mu_);
      if (session_.session == s.session) {
        session_ = {};
        dead.swap(idle_);
        for (Connection* d : dead) all_.erase(std::find(all_.begin(), all_.end(), d));
      }
    }
    for (Connection* d : dead) delete d;
    if (attempt == 1) return c;
  }
  return Status::IOError("unreachable");
}

void Server::Release(Connection* conn) {
  std::vector<Connection*> dead;
  {
    MutexLock l(mu_);
    if (!conn->broken()) {
      idle_.push_back(conn);
    } else {
      dead.push_back(conn);
      // The daemon went away: the idle connections are dead too; drop them now so the next
      // call tries one fresh connect instead of failing on each of them in turn.
      if (conn->peer_gone()) dead.insert(dead.end(), idle_.begin(), idle_.end()), idle_.clear();
      for (Connection* d : dead) all_.erase(std::find(all_.begin(), all_.end(), d));
    }
    cv_.NotifyOne();
  }
  for (Connection* d : dead) delete d;
}

bool Server::RelocateFd(int fd, int* err) {
  MutexLock l(mu_);
  for (Connection* c : all_) {
    if (!c->UsesFd(fd)) continue;
    Result<int> moved = RelocateInternalFd(fd);
    *err = moved.ok() ? 0 : moved.status().code();
    if (moved.ok()) c->ReplaceFd(fd, *moved);
    return true;
  }
  return false;
}

SessionInfo Server::ForgetAfterFork(uint32_t child_pid) {
  // Only this thread exists in the child; locks held by vanished threads are re-created.
  new (&mu_) Mutex();
  new (&cv_) CondVar();
  new (&establish_mu_) Mutex();
  for (Connection* c : all_) {
    c->Abandon();
    delete c;
  }
  all_.clear();
  idle_.clear();
  connecting_ = 0;
  who_.pid = child_pid;
  SessionInfo parent = session_;
  session_ = {};
  return parent;
}

}  // namespace iorelay::client
