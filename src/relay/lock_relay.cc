// Lock requests of a relay's sessions, each carried upstream by that session's own client on a
// short-lived thread; see lock_relay.h for why.
#include "relay/lock_relay.h"

#include <fcntl.h>

#include <system_error>
#include <thread>
#include <utility>

#include "client/client.h"
#include "client/placement.h"
#include "common/mutex.h"
#include "daemon/lock_service.h"

namespace iorelay::relay {

struct LockRelay::Upstream {
  explicit Upstream(ClientPtr c) : client(std::move(c)) {}
  ClientPtr client;
  // Guarded by State::mu (declared after this: no annotation can name it): this session's
  // requests in flight.
  size_t running = 0;
  // The handle this session holds at the lock owner on each file it locked.
  struct Anchor {
    int server = -1;
    uint64_t handle = 0;
    uint64_t generation = 0;
  };
  Mutex mu;
  std::map<std::pair<uint64_t, uint64_t>, Anchor> anchors GUARDED_BY(mu);
};

struct LockRelay::State {
  MakeClient make;
  int max_requests = 0;
  mutable Mutex mu;
  CondVar cv;
  std::map<uint64_t, std::shared_ptr<Upstream>> sessions GUARDED_BY(mu);  // by relay session
  std::map<uint64_t, Done> pending GUARDED_BY(mu);                        // not yet answered
  uint64_t next GUARDED_BY(mu) = 1;
  int running GUARDED_BY(mu) = 0;    // threads alive
  int answering GUARDED_BY(mu) = 0;  // inside a Done
  bool cancelled GUARDED_BY(mu) = false;
  int cancel_err GUARDED_BY(mu) = EINTR;
  uint64_t requests GUARDED_BY(mu) = 0;
  uint64_t waits GUARDED_BY(mu) = 0;
  uint64_t errors GUARDED_BY(mu) = 0;
};

namespace {

// An outcome as the errno the relay's client gets.
int Errno(const client::Outcome& o) { return o.ok() ? 0 : o.status.code(); }

// Opens `path` at the lock owner `server` for the session of `u`, once per file. 0 or errno.
int EnsureAnchor(LockRelay::Upstream& u, int server, const proto::LockRequest& req,
                 const std::string& path, int access_mode) {
  MutexLock lock(u.mu);
  auto it = u.anchors.find({req.dev, req.ino});
  if (it != u.anchors.end() && it->second.server == server) return 0;
  client::Client& c = *u.client->impl;
  const std::vector<uint8_t> fields =
      proto::EncodeFields(proto::OpenRequest{path, access_mode & O_ACCMODE, 0});
  client::CallReply reply;
  client::Outcome r = c.Call(server, {.op = proto::Op::kOpen, .fields = fields}, &reply);
  if (!r.ok()) return Errno(r);
  proto::OpenReply rep;
  if (!proto::DecodeFields(reply.payload, &rep).ok()) return EIO;
  if (rep.attrs.dev != req.dev || rep.attrs.ino != req.ino) {
    // The path names another file now (renamed or replaced since the open).
    (void)c.Post(server, {.op = proto::Op::kClose,
                          .fields = proto::EncodeFields(proto::HandleRequest{rep.handle}),
                          .generation = reply.generation});
    return ENOLCK;
  }
  u.anchors[{req.dev, req.ino}] = {server, rep.handle, reply.generation};
  return 0;
}

// Closes the session's anchor on the file, if any (after its locks there went).
void DropAnchor(LockRelay::Upstream& u, uint64_t dev, uint64_t ino) {
  LockRelay::Upstream::Anchor a;
  {
    MutexLock lock(u.mu);
    auto it = u.anchors.find({dev, ino});
    if (it == u.anchors.end()) return;
    a = it->second;
    u.anchors.erase(it);
  }
  (void)u.client->impl->Post(a.server,
                             {.op = proto::Op::kClose,
                              .fields = proto::EncodeFields(proto::HandleRequest{a.handle}),
                              .generation = a.generation});
}

}  // namespace

LockRelay::LockRelay(MakeClient make_client, PathOf path_of, int max_requests)
    : path_of_(std::move(path_of)), state_(std::make_shared<State>()) {
  state_->make = std::move(make_client);
  state_->max_requests = max_requests;
}

LockRelay::~LockRelay() {
  CancelAll(EINTR);
  // Threads still waiting upstream hold the state and their session's client themselves; they
  // end when upstream answers or the connection goes, and answer nobody.
  MutexLock lock(state_->mu);
  state_->sessions.clear();
}

void LockRelay::Run(uint64_t owner, Done done,
                    std::function<int(Upstream&, proto::LockReply*)> call) {
  std::shared_ptr<State> st = state_;
  std::shared_ptr<Upstream> up;
  uint64_t seq = 0;
  int refuse = 0;
  {
    MutexLock lock(st->mu);
    ++st->requests;
    if (st->cancelled) {
      refuse = st->cancel_err;
    } else if (st->running >= st->max_requests) {
      refuse = ENOLCK;
    } else {
      std::shared_ptr<Upstream>& slot = st->sessions[owner];
      if (slot == nullptr) {
        ClientPtr c = st->make();
        if (c != nullptr) slot = std::make_shared<Upstream>(std::move(c));
      }
      if (slot == nullptr) {
        st->sessions.erase(owner);
        refuse = EIO;
      } else if (slot->running >= daemon::kMaxParkedPerOwner) {
        refuse = ENOLCK;  // one process's threads cannot take every thread of the relay
      } else {
        up = slot;
        seq = st->next++;
        st->pending.emplace(seq, std::move(done));
        ++st->running;
        ++up->running;
      }
    }
    if (refuse != 0) ++st->errors;
  }
  if (refuse != 0) return done(refuse, proto::LockReply{});
  auto work = [st, up, seq, call = std::move(call)] {
    proto::LockReply rep;
    const int err = call(*up, &rep);
    Done d;
    {
      MutexLock lock(st->mu);
      if (err != 0) ++st->errors;
      auto it = st->pending.find(seq);
      if (it != st->pending.end()) {
        d = std::move(it->second);
        st->pending.erase(it);
        ++st->answering;
      }
    }
    if (d) d(err, rep);
    MutexLock lock(st->mu);
    if (d) --st->answering;
    --st->running;
    --up->running;
    st->cv.NotifyAll();
  };
  try {
    std::thread(std::move(work)).detach();
  } catch (const std::system_error&) {
    Done d;
    {
      MutexLock lock(st->mu);
      --st->running;
      --up->running;
      ++st->errors;
      auto it = st->pending.find(seq);
      if (it != st->pending.end()) {
        d = std::move(it->second);
        st->pending.erase(it);
      }
    }
    if (d) d(ENOLCK, proto::LockReply{});
  }
}

void LockRelay::Lock(uint64_t owner, const proto::LockRequest& req, int fd, int access_mode,
                     Done done) {
  Result<std::string> path = path_of_(fd);
  if (!path.ok()) return done(path.status().code(), proto::LockReply{});
  if (req.cmd == F_SETLKW) {
    MutexLock lock(state_->mu);
    ++state_->waits;
  }
  Run(owner, std::move(done),
      [req, p = std::move(*path), access_mode](Upstream& u, proto::LockReply* rep) {
        client::Client& c = *u.client->impl;
        // The daemon that owns the file's locks, by the same rule as every client.
        const int server = client::LockOwner(req.dev, req.ino, c.server_count());
        if (int err = EnsureAnchor(u, server, req, p, access_mode); err != 0) return err;
        return Errno(c.CallMsg(server, proto::Op::kLock, req, rep));
      });
}

void LockRelay::UnlockAll(uint64_t owner, const proto::UnlockAllRequest& req, Done done) {
  {
    MutexLock lock(state_->mu);
    if (!state_->cancelled && state_->sessions.count(owner) == 0) {
      // This process never locked through the relay: nothing to release upstream.
      ++state_->requests;
      return done(0, proto::LockReply{});
    }
  }
  Run(owner, std::move(done), [req](Upstream& u, proto::LockReply*) {
    client::Client& c = *u.client->impl;
    const int server = client::LockOwner(req.dev, req.ino, c.server_count());
    const int err =
        Errno(c.CallMsg(server, proto::Op::kUnlockAll, req, static_cast<proto::Empty*>(nullptr)));
    DropAnchor(u, req.dev, req.ino);  // the locks are gone; so is the reason to hold it open
    return err;
  });
}

void LockRelay::ReleaseOwner(uint64_t owner) {
  // Dropping the session's client closes its upstream session there (once a wait still in
  // flight returns), which releases its locks as a process exit does.
  std::shared_ptr<Upstream> gone;
  MutexLock lock(state_->mu);
  auto it = state_->sessions.find(owner);
  if (it == state_->sessions.end()) return;
  gone = std::move(it->second);
  state_->sessions.erase(it);
}

void LockRelay::CancelAll(int err) {
  std::map<uint64_t, Done> cancelled;
  {
    MutexLock lock(state_->mu);
    state_->cancelled = true;
    state_->cancel_err = err;
    cancelled.swap(state_->pending);
    // After this, no answer runs: the daemon may go away.
    state_->cv.Wait(state_->mu, [this]() REQUIRES(state_->mu) { return state_->answering == 0; });
  }
  for (auto& [seq, done] : cancelled) done(err, proto::LockReply{});
}

nlohmann::json LockRelay::StatsJson() const {
  MutexLock lock(state_->mu);
  return {{"requests", state_->requests},
          {"waits", state_->waits},
          {"errors", state_->errors},
          {"in_flight", state_->running},
          {"sessions", state_->sessions.size()}};
}

}  // namespace iorelay::relay
