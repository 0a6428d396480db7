// Event loops: epoll (edge-triggered for connections, level-triggered for listeners), an
// eventfd to be woken from other threads, and a tick that enforces the time-based limits.
#include "daemon/io_loop.h"

#include <fmt/core.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

#include "common/monotonic.h"
#include "daemon/job_lifecycle.h"

namespace iorelay::daemon {
namespace {

constexpr uint64_t kWakeId = 0;
constexpr uint64_t kMoverId = uint64_t{1} << 60;  // the pipe mover's completions
constexpr uint64_t kListenerBase = uint64_t{1} << 62;
// A connection's AuxPollFd (the socket of a shared-memory connection).
constexpr uint64_t kAuxBit = uint64_t{1} << 61;
constexpr int kFramesPerTurn = 16;  // then the other ready connections get their turn
constexpr size_t kScratchBytes = 64 * 1024;
constexpr int64_t kMaxTickNs = 50'000'000;
constexpr int64_t kAcceptBackoffMinNs = 10'000'000;
constexpr int64_t kAcceptBackoffMaxNs = 1'000'000'000;
constexpr int64_t kRefusalLogPeriodNs = 1'000'000'000;

// Accept errors that pass when resources come back (descriptors, memory): the listener is
// disarmed for a back-off instead of never accepting again.
bool IsTransientAcceptError(int err) {
  return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM || err == EPERM;
}

// Whether a connection waits in a listener's backlog.
bool ConnectionWaiting(int listen_fd) {
  struct pollfd p = {listen_fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

// Whether an accepted connection may still count against --max-handshakes.
bool InHandshake(const std::weak_ptr<ClientConn>& weak) {
  const ConnPtr conn = weak.lock();
  return conn != nullptr && conn->in_handshake();
}

// Whether `bytes` moved in `elapsed_ns` fall below `rate` bytes per second (the slow-reader
// and slow-sender rules' floor).
bool BelowRate(uint64_t bytes, int64_t elapsed_ns, uint64_t rate) {
  return static_cast<double>(bytes) <
         static_cast<double>(rate) * static_cast<double>(elapsed_ns) / 1e9;
}

}  // namespace

IoLoop::IoLoop(Core& core, std::vector<IoLoop*>* peers)
    : core_(core), peers_(peers), accept_backoff_ns_(kAcceptBackoffMinNs) {}

IoLoop::~IoLoop() {
  Stop();
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Status IoLoop::Init() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return Status::LastError("epoll_create1");
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return Status::LastError("eventfd");
  struct epoll_event ev = {};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeId;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) {
    return Status::LastError("epoll_ctl");
  }
  if (core_.async_pipe_moves) {
    Result<std::unique_ptr<PipeMover>> mover = PipeMover::Create();
    ev.events = EPOLLIN;
    ev.data.u64 = kMoverId;
    if (mover.ok() && ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, (*mover)->event_fd(), &ev) == 0) {
      mover_ = std::move(*mover);
    } else {  // (this loop then moves its clients' piped bytes itself)
      fmt::print(
          stderr, "iorelayd: an event loop's io_uring: {}\n",
          mover.ok() ? Status::LastError("epoll_ctl").ToString() : mover.status().ToString());
    }
  }
  scratch_.resize(kScratchBytes);
  return Status::Ok();
}

void IoLoop::AddListener(Listener* listener) {
  struct epoll_event ev = {};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenerBase + listeners_.size();
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listener->PollFd(), &ev);
  listeners_.push_back(listener);
  listener_retry_ns_.push_back(0);
}

void IoLoop::Start() {
  thread_ = std::thread([this] { Run(); });
}

void IoLoop::Wake() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t r = ::write(wake_fd_, &one, sizeof one);
}

void IoLoop::Adopt(ConnPtr conn, int64_t accepted_ns) {
  {
    MutexLock lock(inbox_mu_);
    inbox_.emplace_back(std::move(conn), accepted_ns);
  }
  Wake();
}

void IoLoop::BeginDrain() {
  draining_.store(true);
  Wake();
}

void IoLoop::Stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  Wake();
  thread_.join();
}

void IoLoop::TakeInbox() {
  uint64_t count;
  [[maybe_unused]] ssize_t r = ::read(wake_fd_, &count, sizeof count);
  std::vector<std::pair<ConnPtr, int64_t>> adopted;
  std::vector<uint64_t> woken;
  {
    MutexLock lock(inbox_mu_);
    adopted.swap(inbox_);
    woken.swap(woken_);
  }
  for (auto& [conn, accepted_ns] : adopted) {
    const uint64_t id = next_id_++;
    // Set before the connection is shared: called by a worker or the sender when the held
    // bytes of a paused connection fall.
    conn->SetWake([this, id] {
      {
        MutexLock lock(inbox_mu_);
        woken_.push_back(id);
      }
      Wake();
    });
    // Writability is watched only while replies wait in the queue (a wake-up per reply the
    // client reads would cost as much as the request); the queue arms and disarms it.
    const int fd = conn->transport()->PollFd();
    conn->SetArmWrite([epoll_fd = epoll_fd_, fd, id](bool write) {
      struct epoll_event ev = {};
      ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET | (write ? EPOLLOUT : 0u);
      ev.data.u64 = id;
      ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &ev);  // (ENOENT once the loop let it go)
    });
    struct epoll_event ev = {};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
    ev.data.u64 = id;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      LogClose(conn, fmt::format("epoll_ctl: {}", Status::LastError("").ToString()));
      conn->Shutdown();
      if (conn->EndHandshake()) core_.stats->conn.handshaking.fetch_sub(1);
      core_.stats->conn.open.fetch_sub(1);
      continue;
    }
    {
      MutexLock lock(registry_mu_);
      registry_.emplace(id, conn);
    }
    const ProtocolSettings settings = ProtocolSettingsFor(core_, *conn->transport());
    auto entry = std::make_unique<Entry>(std::move(conn), &core_.buffers, core_.config.max_io_bytes,
                                         accepted_ns, settings);
    entry->poll_fd = fd;
    // A write's data is read once its bytes are reserved (Reserve).
    entry->reader.HoldTails();
    entry->reader.CountBuffersIn(&core_.stats->conn.receiving_bytes);
    conns_.emplace(id, std::move(entry));
    if (draining_.load()) Close(id, "daemon stopping");
  }
  for (uint64_t id : woken) Service(id);
}

void IoLoop::PauseListener(size_t index, int64_t retry_ns) {
  struct epoll_event ev = {};
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listeners_[index]->PollFd(), &ev);
  if (retry_ns != 0) listener_retry_ns_[index] = retry_ns;
}

void IoLoop::AcceptAll(size_t index) {
  Listener* l = listeners_[index];
  ConnCounters& counters = core_.stats->conn;
  for (int i = 0; i < 64; ++i) {
    // Connections still in their handshake have a cap of their own, so that peers without a
    // credential cannot fill --max-connections: at the cap, the next connections wait in the
    // listener's backlog (a burst of real clients gets in as handshakes end; refusing them
    // would fail them) and the listener is re-armed at the next tick.
    // Where connections wait and the oldest handshake is old enough, it makes room for one.
    if (counters.handshaking.load() >= static_cast<uint64_t>(core_.config.max_handshakes) &&
        !(ConnectionWaiting(l->PollFd()) && EvictOldestHandshake(MonotonicNs()))) {
      const int64_t now = MonotonicNs();
      PauseListener(index, now + 1);
      counters.paused_max_handshakes.fetch_add(1);
      if (now - last_handshake_log_ns_ >= kRefusalLogPeriodNs) {
        fmt::print(stderr,
                   "iorelayd: accepting on {} paused: --max-handshakes {} connections are in "
                   "their handshake\n",
                   l->address(), core_.config.max_handshakes);
        last_handshake_log_ns_ = now;
      }
      return;
    }
    Result<std::unique_ptr<Connection>> c = l->Accept();
    if (!c.ok()) {
      const int err = c.status().code();
      if (err == EAGAIN || err == EWOULDBLOCK) return;
      fmt::print(stderr, "iorelayd: accept on {}: {}\n", l->address(), c.status().ToString());
      // Disarmed: for a back-off after exhausted resources, for good after other errors.
      if (IsTransientAcceptError(err)) {
        PauseListener(index, MonotonicNs() + accept_backoff_ns_);
        accept_backoff_ns_ = std::min(accept_backoff_ns_ * 2, kAcceptBackoffMaxNs);
      } else {
        PauseListener(index, 0);
      }
      return;
    }
    accept_backoff_ns_ = kAcceptBackoffMinNs;
    const int64_t now = MonotonicNs();
    if (counters.open.load() >= static_cast<uint64_t>(core_.config.max_connections)) {
      counters.refused_max_connections.fetch_add(1);
      ++refusals_unlogged_;
      if (now - last_refusal_log_ns_ >= kRefusalLogPeriodNs) {
        fmt::print(stderr,
                   "iorelayd: refused {} connection(s) on {}: --max-connections {} reached\n",
                   refusals_unlogged_, l->address(), core_.config.max_connections);
        refusals_unlogged_ = 0;
        last_refusal_log_ns_ = now;
      }
      continue;  // (the connection closes here)
    }
    counters.accepted.fetch_add(1);
    counters.open.fetch_add(1);
    counters.handshaking.fetch_add(1);  // (until authenticated or closed)
    auto conn = std::make_shared<ClientConn>(std::move(*c), &core_.buffers);
    while (!handshakes_.empty() && !InHandshake(handshakes_.front().conn)) handshakes_.pop_front();
    handshakes_.push_back({now, conn});
    IoLoop* target = (*peers_)[next_peer_++ % peers_->size()];
    target->Adopt(std::move(conn), now);
  }
}

bool IoLoop::EvictOldestHandshake(int64_t now) {
  const int64_t min_age_ns = int64_t{core_.config.handshake_evict_ms} * 1'000'000;
  while (!handshakes_.empty()) {
    const Accepted oldest = handshakes_.front();
    const ConnPtr conn = oldest.conn.lock();
    if (conn != nullptr && conn->in_handshake() &&
        (min_age_ns == 0 || now - oldest.accepted_ns < min_age_ns)) {
      return false;
    }
    handshakes_.pop_front();
    // (Gone, or authenticated or closed meanwhile: the count is already down for it.)
    if (conn == nullptr || !conn->EndHandshake()) continue;
    conn->RequestEviction();
    core_.stats->conn.handshaking.fetch_sub(1);
    ++evictions_unlogged_;
    if (now - last_eviction_log_ns_ >= kRefusalLogPeriodNs) {
      fmt::print(stderr,
                 "iorelayd: closing {} connection(s) in their handshake for over {} ms to accept "
                 "others (--max-handshakes {}, --handshake-evict-ms)\n",
                 evictions_unlogged_, core_.config.handshake_evict_ms, core_.config.max_handshakes);
      evictions_unlogged_ = 0;
      last_eviction_log_ns_ = now;
    }
    return true;
  }
  return false;
}

void IoLoop::Outstanding(std::vector<ConnPtr>* out) {
  MutexLock lock(registry_mu_);
  for (const auto& [id, c] : registry_) {
    if (c->outstanding.load(std::memory_order_acquire) > 0) out->push_back(c);
  }
}

void IoLoop::Service(uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Entry& e = *it->second;
  if (!e.conn->Flush()) {
    Close(id, "");  // (a failed send is logged where it failed)
    return;
  }
  Read(id, e);
}

IoLoop::InflightLimit IoLoop::OverLimit(const ClientConn& c) const {
  if (c.held_bytes() > core_.config.max_inflight_bytes) return InflightLimit::kConnection;
  if (c.app_inflight_bytes() > JobInflightShare(c)) {
    return InflightLimit::kApplication;
  }
  return InflightLimit::kNone;
}

void IoLoop::Pause(Entry& e, InflightLimit over) {
  if (!e.paused) {
    e.paused = true;
    e.conn->SetPaused(true);
    (over == InflightLimit::kConnection ? core_.stats->conn.paused_inflight_limit
                                        : core_.stats->conn.paused_app_inflight_limit)
        .fetch_add(1);
  }
  if (over == InflightLimit::kApplication) {
    // A fall of the application's bytes on another connection wakes this one.
    // (Weak: the wake may run on a worker just after the loop closed the connection.)
    std::weak_ptr<ClientConn> weak = e.conn;
    e.conn->session->stats()->inflight.Park(e.conn.get(), JobInflightShare(*e.conn), [weak] {
      if (auto conn = weak.lock()) conn->MaybeWake();
    });
  }
}

void IoLoop::Resume(Entry& e) {
  if (!e.paused) return;
  e.paused = false;
  e.conn->SetPaused(false);
  if (e.conn->session != nullptr) e.conn->session->stats()->inflight.Unpark(e.conn.get());
}

IoLoop::InflightLimit IoLoop::TryReserve(Entry& e, uint64_t n) {
  ClientConn& c = *e.conn;
  if (c.held_bytes() > core_.config.max_inflight_bytes) return InflightLimit::kConnection;
  return c.Reserve(n, JobInflightShare(c)) ? InflightLimit::kNone : InflightLimit::kApplication;
}

bool IoLoop::Reserve(Entry& e, uint64_t n) {
  if (const InflightLimit over = TryReserve(e, n); over != InflightLimit::kNone) {
    Pause(e, over);
    // Tried again after publishing the pause: a fall in between would wake nobody (and the
    // tick's look at a paused connection covers a change of limit in between).
    if (TryReserve(e, n) != InflightLimit::kNone) return false;
  }
  Resume(e);
  return true;
}

void IoLoop::Read(uint64_t id, Entry& e) {
  if (e.read_eof || draining_.load()) return;
  if (Evicted(*e.conn)) {
    core_.stats->conn.closed_handshake_evicted.fetch_add(1);
    return Close(id, "");  // (logged by the accepting loop, at most once a second)
  }
  e.reader.NewTurn();
  for (int frames = 0; frames < kFramesPerTurn; ++frames) {
    // A write whose data is reserved is read to its end without looking at the limits again:
    // paused there, it would hold its reservation while it waits for others' bytes to fall, and
    // two such connections would wait for each other.
    if (!e.reader.receiving_tail()) {
      // Left of the last frame's reservation once it was handled (its request, admitted, took it
      // over; refused, it leaves it): given back. (While a piped write's bytes are still being
      // taken, its request is not admitted yet: HandlerDone brings the loop back here.)
      if (!e.conn->handler_busy.load(std::memory_order_acquire)) e.conn->ReleaseReservation();
      if (const InflightLimit over = OverLimit(*e.conn); over != InflightLimit::kNone) {
        Pause(e, over);
        // Checked again after publishing the pause: a fall in between would wake nobody.
        if (OverLimit(*e.conn) != InflightLimit::kNone) return e.reader.ReceiveUntilEmpty();
      }
      Resume(e);
    }
    // A metadata request of it is running on the handler pool: the next one waits (woken by
    // HandlerDone).
    if (e.conn->handler_busy.load(std::memory_order_acquire)) return e.reader.ReceiveUntilEmpty();
    const bool authed = e.conn->session != nullptr;
    // A job being released (or revoked) gets what it asked served, and nothing more is read:
    // the connection closes once idle, at the next tick (JobEndsConnection), so that a job
    // that keeps writing drains too. (A write whose data is arriving is read to its end first.)
    // Except a released job's files whose offset the daemon keeps: served until closed.
    if (authed && !e.reader.receiving_tail() && !e.conn->session->job().accepting() &&
        !ReleaseServesConnection(*e.conn, core_.config.release_keeps_offset_files)) {
      return;
    }
    const FrameReader::Step step = e.read_held
                                       ? FrameReader::Step::kFrame
                                       : e.reader.Next(e.conn->transport(), authed, scratch_);
    switch (step) {
      case FrameReader::Step::kTail:
        if (!Reserve(e, e.reader.data_len())) return e.reader.ReceiveUntilEmpty();  // (woken)
        e.reader.AdmitTail();
        break;
      case FrameReader::Step::kAgain:
        if (e.side != nullptr && e.side->Polling()) again_.push_back(id);
        return;
      case FrameReader::Step::kEof:
        if (!authed) return Close(id, "the client left before authenticating");
        // The client is done sending; replies in flight may still go out.
        e.read_eof = true;
        e.ended = true;
        EndConnection(core_, e.conn);
        if (e.conn->outstanding.load() == 0 && e.conn->queued_bytes() == 0) Close(id, "");
        return;
      case FrameReader::Step::kError:
        if (e.reader.integrity_failed()) {
          core_.stats->conn.closed_integrity_check.fetch_add(1);
        } else {
          core_.stats->conn.closed_protocol_error.fetch_add(1);
        }
        return Close(id, e.reader.error());
      case FrameReader::Step::kFrame: {
        // A read's reply is reserved as a write's data is, and a piped write's pipe bytes too
        // (its request takes the reservation over when admitted). Held, the frame waits here,
        // and nothing after it is read. (Not a frame whose in-band data holds a reservation
        // already: waiting with it, two connections could wait for each other.)
        if (authed && e.reader.data_len() == 0) {
          const uint64_t reply =
              ReadReservation(e.reader.header(), e.reader.fields(), core_.config.max_io_bytes);
          e.read_held = reply > 0 && !Reserve(e, reply);
          if (e.read_held) return e.reader.ReceiveUntilEmpty();  // (woken when the bytes fall)
        }
        const bool handled = HandleFrame(core_, e.conn, e.reader, e.protocol, core_.clock.NowNs());
        // (Authenticated now: no longer counts against --max-handshakes.)
        if (!authed && e.conn->session != nullptr && e.conn->EndHandshake()) {
          core_.stats->conn.handshaking.fetch_sub(1);
        }
        if (!handled) {
          // Refused (malformed, out of order) is a protocol error; a connection that failed
          // while its reply went out (the client left without reading it) is not.
          if (!e.conn->closed()) core_.stats->conn.closed_protocol_error.fetch_add(1);
          e.conn->Flush();       // the refusal, when the socket takes it
          return Close(id, "");  // (logged by HandleFrame)
        }
        if (e.conn->transport()->PollFd() != e.poll_fd) Reregister(id, e);
        break;
      }
    }
  }
  again_.push_back(id);
}

void IoLoop::Reregister(uint64_t id, Entry& e) {
  Connection* t = e.conn->transport();
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, e.poll_fd, nullptr);
  e.poll_fd = t->PollFd();
  struct epoll_event ev = {};
  ev.events = EPOLLIN | EPOLLET;
  ev.data.u64 = id;
  bool ok = ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, e.poll_fd, &ev) == 0;
  e.side = t->capabilities().side;
  e.aux_fd = e.side != nullptr ? e.side->AuxPollFd() : -1;
  if (ok && e.aux_fd >= 0) {
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
    ev.data.u64 = id | kAuxBit;
    ok = ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, e.aux_fd, &ev) == 0;
  }
  if (!ok) {
    e.conn->Shutdown();  // the tick closes it
    LogClose(e.conn, fmt::format("epoll_ctl: {}", Status::LastError("").ToString()));
  }
}

void IoLoop::AuxEvent(uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  if (it->second->side == nullptr) return;
  it->second->side->OnAuxEvent();
  Service(id);
  // A reader that stopped after a short read in this turn has not seen the end yet: one more
  // (the connection may be gone already: looked up again).
  it = conns_.find(id);
  if (it != conns_.end() && it->second->side->HungUp()) Service(id);
}

void IoLoop::Close(uint64_t id, const std::string& why) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  std::unique_ptr<Entry> e = std::move(it->second);
  conns_.erase(it);
  {
    MutexLock lock(registry_mu_);
    registry_.erase(id);
  }
  if (!why.empty()) LogClose(e->conn, why);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, e->poll_fd, nullptr);
  if (e->aux_fd >= 0) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, e->aux_fd, nullptr);
  e->conn->SetPaused(false);
  if (e->conn->session != nullptr) {
    e->conn->session->stats()->inflight.Unpark(e->conn.get());
    e->conn->ReleaseReservation();  // (a frame it was inside of; its request never came)
  } else if (e->conn->EndHandshake()) {
    core_.stats->conn.handshaking.fetch_sub(1);
  }
  e->conn->Shutdown();  // queued replies dropped; requests still queued are cancelled
  if (!e->ended) EndConnection(core_, e->conn);
  // The loop's hold on the connection (and, when it is the last, its descriptors and rings)
  // goes before the count says it is closed.
  e.reset();
  core_.stats->conn.open.fetch_sub(1);
}

bool IoLoop::SlowSender(Entry& e, int64_t now,
                        std::vector<std::pair<uint64_t, std::string>>* to_close, uint64_t id) {
  const Config& cfg = core_.config;
  const uint64_t incomplete = e.reader.incomplete_bytes();
  if (incomplete == 0 || e.paused) {  // between frames, or held back here
    e.frame_window_ns = 0;
    return false;
  }
  // Progress is what the connection received since the window began, of this frame and of
  // those completed meanwhile: a client streaming small frames has one begun at most ticks,
  // and the growth of that one alone says nothing of its rate.
  const uint64_t received = e.reader.received_bytes();
  if (e.frame_window_ns == 0) {
    e.frame_window_ns = now;
    e.frame_window_bytes = received;
    return false;
  }
  const int64_t elapsed = now - e.frame_window_ns;
  if (elapsed < int64_t{cfg.send_window_ms} * 1'000'000) return false;
  const uint64_t got = received - e.frame_window_bytes;
  if (!BelowRate(got, elapsed, cfg.min_send_rate)) {
    e.frame_window_ns = now;
    e.frame_window_bytes = received;
    return false;
  }
  core_.stats->conn.closed_slow_sender.fetch_add(1);
  to_close->emplace_back(
      id, fmt::format("slow sender: {} bytes in {} ms with a frame begun ({} bytes of it so far), "
                      "below --min-send-rate {} bytes/s over --send-window-ms {}",
                      got, elapsed / 1'000'000, incomplete, cfg.min_send_rate, cfg.send_window_ms));
  return true;
}

void IoLoop::Tick(int64_t now) {
  core_.retired_movers.Reap();  // (moves given up on by workers, once the client lets go)
  const Config& cfg = core_.config;
  const int64_t handshake_ns = int64_t{cfg.handshake_timeout_ms} * 1'000'000;
  const int64_t window_ns = int64_t{cfg.send_window_ms} * 1'000'000;
  std::vector<std::pair<uint64_t, std::string>> to_close;
  std::vector<uint64_t> to_service;
  size_t busy = 0;
  for (auto& [id, ep] : conns_) {
    Entry& e = *ep;
    ClientConn& c = *e.conn;
    const bool authed = c.session != nullptr;
    if (c.closed()) {
      to_close.emplace_back(id, "");  // (logged where it was shut down)
      continue;
    }
    if (Evicted(c)) {
      core_.stats->conn.closed_handshake_evicted.fetch_add(1);
      to_close.emplace_back(id, "");  // (logged by the accepting loop, at most once a second)
      continue;
    }
    if (authed && JobEndsConnection(c, cfg.release_keeps_offset_files)) {
      to_close.emplace_back(
          id, fmt::format("job {} {}", c.session->app(), JobStateName(c.session->job().state())));
      continue;
    }
    if (!authed && now - e.accepted_ns >= handshake_ns) {
      core_.stats->conn.closed_handshake_deadline.fetch_add(1);
      to_close.emplace_back(
          id, fmt::format("no authentication within {} ms of accepting it (--handshake-timeout-ms)",
                          cfg.handshake_timeout_ms));
      continue;
    }
    if (SlowSender(e, now, &to_close, id)) continue;
    const uint64_t queued = c.queued_bytes();
    // (A safety net for a hung-up shared-memory client whose end the aux event did not reach.)
    if (!e.read_eof && e.side != nullptr && e.side->HungUp()) to_service.push_back(id);
    if (queued > 0) {
      int64_t start = 0;
      uint64_t sent = 0;
      c.SendWindow(&start, &sent);
      if (start != 0 && now - start >= window_ns) {
        if (BelowRate(sent, now - start, cfg.min_send_rate)) {
          core_.stats->conn.closed_slow_reader.fetch_add(1);
          to_close.emplace_back(
              id, fmt::format("slow reader: took {} bytes in {} ms with {} bytes queued, below "
                              "--min-send-rate {} bytes/s over --send-window-ms {}",
                              sent, (now - start) / 1'000'000, queued, cfg.min_send_rate,
                              cfg.send_window_ms));
          continue;
        }
        c.RestartSendWindow(now);
      }
      to_service.push_back(id);  // (a safety net: the socket's writable edge also flushes)
    } else if (e.paused && OverLimit(c) == InflightLimit::kNone) {
      to_service.push_back(id);
    }
    const int outstanding = c.outstanding.load(std::memory_order_acquire);
    if (e.read_eof && outstanding == 0 && queued == 0) {
      to_close.emplace_back(id, "");
      continue;
    }
    if (outstanding > 0 || queued > 0) ++busy;
  }
  busy_.store(busy);
  ticks_.fetch_add(1);
  for (auto& [id, why] : to_close) Close(id, why);
  for (uint64_t id : to_service) Service(id);
  for (size_t i = 0; i < listeners_.size(); ++i) {
    if (listener_retry_ns_[i] != 0 && now >= listener_retry_ns_[i] && !drained_) {
      listener_retry_ns_[i] = 0;
      struct epoll_event ev = {};
      ev.events = EPOLLIN;
      ev.data.u64 = kListenerBase + i;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listeners_[i]->PollFd(), &ev);
    }
  }
}

void IoLoop::Run() {
  const int64_t tick_ns =
      std::min<int64_t>(kMaxTickNs, int64_t{core_.config.heartbeat_ms} * 1'000'000);
  int64_t next_tick = MonotonicNs() + tick_ns;
  PipeMover::OfThisLoop() = mover_.get();
  constexpr int kMaxEvents = 256;
  struct epoll_event events[kMaxEvents];
  while (!stop_.load()) {
    int timeout_ms = 0;
    if (again_.empty()) {
      timeout_ms =
          static_cast<int>(std::max<int64_t>(0, (next_tick - MonotonicNs() + 999'999) / 1'000'000));
    }
    int n = ::epoll_wait(epoll_fd_, events, kMaxEvents, timeout_ms);
    for (int i = 0; i < n; ++i) {
      const uint64_t id = events[i].data.u64;
      if (id == kWakeId) {
        TakeInbox();
      } else if (id == kMoverId) {
        mover_->Reap();
      } else if (id >= kListenerBase) {
        if (!drained_) AcceptAll(id - kListenerBase);
      } else if ((id & kAuxBit) != 0) {
        AuxEvent(id & ~kAuxBit);
      } else {
        if ((events[i].events & (EPOLLRDHUP | EPOLLHUP)) != 0) {
          // The client's end, perhaps in the same event as its last bytes: read up to it.
          if (auto it = conns_.find(id); it != conns_.end()) it->second->reader.ReceiveUntilEmpty();
        }
        Service(id);
      }
    }
    if (draining_.load() && !drained_) {
      drained_ = true;
      for (Listener* l : listeners_) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, l->PollFd(), nullptr);
      std::vector<uint64_t> unauthenticated;
      for (auto& [id, e] : conns_) {
        if (e->conn->session == nullptr) unauthenticated.push_back(id);
      }
      for (uint64_t id : unauthenticated) Close(id, "daemon stopping");
    }
    if (!again_.empty()) {
      std::vector<uint64_t> again;
      again.swap(again_);
      for (uint64_t id : again) Service(id);
    }
    const int64_t now = MonotonicNs();
    if (now >= next_tick) {
      Tick(now);
      next_tick = now + tick_ns;
    }
  }
  TakeInbox();
  std::vector<uint64_t> ids;
  for (auto& [id, e] : conns_) ids.push_back(id);
  for (uint64_t id : ids) {
    Entry& e = *conns_[id];
    const bool busy = e.conn->outstanding.load() > 0 || e.conn->queued_bytes() > 0;
    if (busy) core_.stats->conn.closed_at_shutdown.fetch_add(1);
    Close(id, busy ? fmt::format("daemon stopping with {} bytes of replies queued and {} requests "
                                 "outstanding (--shutdown-timeout-ms)",
                                 e.conn->queued_bytes(), e.conn->outstanding.load())
                   : "");
  }
}

}  // namespace iorelay::daemon
