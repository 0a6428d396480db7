// Client construction, request routing to daemons, and the file and lock registries.
#include "client/client.h"

#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "client/internal_fds.h"
#include "client/job_map.h"
#include "client/raw_file.h"
#include "client/spin_wait.h"
#include "common/auth.h"

namespace iorelay::client {

Result<std::unique_ptr<Client>> Client::Create(ClientConfig cfg) {
  std::unique_ptr<Client> c(new Client(std::move(cfg)));
  Result<Secret> secret = LoadSecretFile(c->cfg_.secret_file);
  if (!secret.ok()) return secret.status();
  c->secret_ = *secret;
  int k = static_cast<int>(c->cfg_.servers.size());
  if (c->cfg_.placement.kind == PlacementKind::kMap) {
    Result<std::string> text = ReadSmallFile(c->cfg_.placement.map_file, 64 << 20);
    if (!text.ok()) return text.status();
    Result<std::map<uint32_t, int>> m = ParsePlacementMap(*text, k);
    if (!m.ok())
      return Status::FromErrno(m.status().code(),
                               c->cfg_.placement.map_file + ": " + m.status().message());
    c->cfg_.placement.mapping = std::move(*m);
  }
  if (c->has_map()) {
    Result<std::string> text = ReadSmallFile(c->cfg_.map_file, 1 << 16);
    if (!text.ok()) return text.status();
    Result<JobMap> m = ParseJobMap(*text, k);
    if (!m.ok()) return Status::InvalidArgument(c->cfg_.map_file + ": " + m.status().message());
    c->active_.store(m->active);
    c->map_epoch_.store(m->epoch);
    c->lock_server_ = m->locks >= 0 ? m->locks : MaskNth(m->active, 0);
    c->next_map_check_ns_.store(MonotonicNs() + kMapCheckNs);
  }
  if (c->cfg_.placement.kind != PlacementKind::kFileHash) {
    Result<int> s = PlaceNode(c->cfg_.placement, c->cfg_.node_id, c->cfg_.nodes, k);
    if (!s.ok()) return s.status();
    c->node_server_ = *s;
  }
  Identity who;
  who.pid = static_cast<uint32_t>(syscall(SYS_getpid));
  who.node_id = c->cfg_.node_id;
  struct utsname u {};
  if (syscall(SYS_uname, &u) == 0) who.host = u.nodename;
  SetSpinAdaptive(c->cfg_.spin_adapt);
  c->listed_attrs_.set_valid_ns(int64_t{c->cfg_.attr_cache_ms} * 1'000'000);
  c->dead_ = std::make_unique<std::atomic<bool>[]>(c->cfg_.servers.size());
  for (const Address& a : c->cfg_.servers) {
    c->servers_.push_back(std::make_unique<Server>(a, &c->secret_, who, c->cfg_.timeout_ms,
                                                   c->cfg_.max_connections, c->cfg_.spin_us,
                                                   c->cfg_.seal));
  }
  return c;
}

bool Client::IsForwarded(std::string_view abs_path) const {
  for (const std::string& p : cfg_.prefixes) {
    if (PathUnder(abs_path, p)) return true;
  }
  return false;
}

int Client::ServerFor(std::string_view path) const {
  // "d/" is "d" (a trailing slash only asks for a directory).
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  int placed = cfg_.placement.kind == PlacementKind::kFileHash ? PlaceFile(path, server_count())
                                                               : node_server_;
  if (has_map() && cfg_.placement.kind != PlacementKind::kMap) {
    // Placed among the daemons in use, as if they were all there is.
    const uint64_t mask = active_.load(std::memory_order_acquire);
    const int n = MaskCount(mask);
    int rank = 0;
    if (cfg_.placement.kind == PlacementKind::kFileHash) {
      rank = PlaceFile(path, n);
    } else if (Result<int> r = PlaceNode(cfg_.placement, cfg_.node_id, cfg_.nodes, n); r.ok()) {
      rank = *r;
    }
    placed = MaskNth(mask, rank);
  }
  const int s = Survivor(placed);
  return s >= 0 ? s : placed;  // none left: the placed one, whose calls fail with EIO
}

bool Client::failover() const {
  return (cfg_.failover || has_map()) && server_count() >= 2 && cfg_.fallback != Fallback::kDirect;
}

void Client::RefreshMap(bool force) {
  if (!has_map()) return;
  const int64_t now = MonotonicNs();
  int64_t next = next_map_check_ns_.load(std::memory_order_relaxed);
  if (!force && now < next) return;
  // One thread reads it per period (a forced read always does).
  if (!next_map_check_ns_.compare_exchange_strong(next, now + kMapCheckNs) && !force) return;
  Result<std::string> text = ReadSmallFile(cfg_.map_file, 1 << 16);
  if (!text.ok()) return;
  Result<JobMap> m = ParseJobMap(*text, server_count());
  if (!m.ok()) return;
  MutexLock l(map_mu_);
  if (m->epoch <= map_epoch_.load()) return;
  active_.store(m->active, std::memory_order_release);
  map_epoch_.store(m->epoch, std::memory_order_release);
}

bool Client::IsActive(int server) const {
  if (!has_map()) return true;
  return server >= 0 && server < 64 && (active_.load(std::memory_order_acquire) >> server) & 1;
}

int Client::LockServer(uint64_t dev, uint64_t ino) const {
  return has_map() ? lock_server_ : LockOwner(dev, ino, server_count());
}

void Client::MarkDead(int server) {
  if (!failover() || server < 0 || server >= server_count()) return;
  if (dead_[server].exchange(true)) return;
  const int to = Survivor(server);
  char line[512];
  int n = std::snprintf(line, sizeof line,
                        "iorelay: daemon %d (%s) does not answer; its files move to daemon %d\n",
                        server, cfg_.servers[server].text.c_str(), to);
  if (n > 0) (void)!::write(2, line, std::min<size_t>(static_cast<size_t>(n), sizeof line - 1));
}

int Client::ReplaceDead(int server) {
  if (!failover()) return -1;
  if (has_map()) {
    RefreshMap(true);
    if (!IsActive(server)) {  // not dead: the pool moved the job off it
      const int next = Survivor(server);
      return next == server ? -1 : next;
    }
  }
  MarkDead(server);
  const int next = Survivor(server);
  return next == server ? -1 : next;
}

int Client::Survivor(int server) const {
  if (!failover() || server < 0 || server >= server_count()) return server;
  for (int k = 0; k < server_count(); ++k) {
    const int s = (server + k) % server_count();
    if (!dead_[s].load() && IsActive(s)) return s;
  }
  return -1;
}

Result<Lease> Client::LeaseFor(int server, uint64_t generation) {
  if (server < 0 || server >= server_count()) return Status::InvalidArgument("no such daemon");
  Result<Lease> lease = servers_[server]->Acquire();
  if (!lease.ok()) return lease.status();
  if (generation != 0 && (*lease)->session().generation != generation) {
    return Status::IOError("the daemon was restarted; the file's handle is gone");
  }
  return lease;
}

Outcome Client::Call(int server, const CallRequest& request, CallReply* reply) {
  Result<Lease> lease = LeaseFor(server, request.generation);
  if (!lease.ok()) return Outcome::Unanswered(lease.status());
  Connection& conn = **lease;
  Result<ReplyInfo> r =
      conn.RoundTrip(request.op, request.fields, request.tx, &reply->payload, request.rx);
  if (!r.ok()) return Outcome::Unanswered(r.status());
  reply->payload_bytes = r->payload_bytes;
  reply->generation = conn.session().generation;
  reply->max_io_bytes = conn.session().max_io_bytes;
  return Outcome::Answered(r->status == 0 ? Status::Ok() : Status::FromErrno(r->status));
}

void Client::CallPipelined(int server, std::span<const CallRequest> requests, size_t window,
                           std::span<CallReply> replies, std::span<Outcome> out) {
  // The pieces of one transfer share the file's session.
  Result<Lease> lease = LeaseFor(server, requests.empty() ? 0 : requests[0].generation);
  if (!lease.ok()) {
    for (Outcome& o : out) o = Outcome::Unanswered(lease.status());
    return;
  }
  Connection& conn = **lease;
  std::vector<Exchange> batch(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const CallRequest& r = requests[i];
    batch[i] = Exchange{r.op, r.fields, r.tx, r.rx, &replies[i].payload};
  }
  const Status transport = conn.Pipeline(batch, window);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!batch[i].answered) {
      out[i] = Outcome::Unanswered(transport.ok() ? Status::IOError("no reply") : transport);
      continue;
    }
    const ReplyInfo& info = batch[i].reply;
    replies[i].payload_bytes = info.payload_bytes;
    replies[i].generation = conn.session().generation;
    replies[i].max_io_bytes = conn.session().max_io_bytes;
    out[i] = Outcome::Answered(info.status == 0 ? Status::Ok() : Status::FromErrno(info.status));
  }
}

Outcome Client::Post(int server, const CallRequest& request) {
  Result<Lease> lease = LeaseFor(server, request.generation);
  if (!lease.ok()) return Outcome::Unanswered(lease.status());
  Connection& conn = **lease;
  Status s = conn.Post(request.op, request.fields);
  return s.ok() ? Outcome::Answered(s) : Outcome::Unanswered(s);
}

void Client::Register(iorelay_file* f) {
  MutexLock l(files_mu_);
  files_.insert(f);
}

void Client::Unregister(iorelay_file* f) {
  MutexLock l(files_mu_);
  files_.erase(f);
}

int Client::MoveInternalFd(int fd) {
  for (auto& s : servers_) {
    int err = 0;
    if (s->RelocateFd(fd, &err)) return -err;
  }
  MutexLock l(files_mu_);
  for (iorelay_file* f : files_) {
    MutexLock d(f->direct_mu);
    if (f->direct_fd.load() != fd) continue;
    Result<int> moved = RelocateInternalFd(fd);
    if (!moved.ok()) return -moved.status().code();
    f->direct_fd.store(*moved);
    return 0;
  }
  return -EBADF;
}

}  // namespace iorelay::client
