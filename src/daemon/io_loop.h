// The daemon's connection I/O: a fixed number of event-loop threads (--io-threads), each owning
// its connections (epoll, non-blocking sockets). A loop reads frames incrementally and routes
// them, flushes outgoing queues when sockets drain, and on its tick enforces the connection
// limits: handshake deadline, slow readers, in-flight bytes. Loop 0 also accepts and hands
// connections out round-robin. No loop ever waits for one client.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "daemon/core.h"
#include "daemon/frame_reader.h"
#include "daemon/pipe_mover.h"
#include "daemon/serve_connection.h"
#include "daemon/transport.h"

namespace iorelay::daemon {

class IoLoop {
 public:
  // `peers` are all the loops (this one included), for handing accepted connections out.
  IoLoop(Core& core, std::vector<IoLoop*>* peers);
  ~IoLoop();
  IoLoop(const IoLoop&) = delete;
  IoLoop& operator=(const IoLoop&) = delete;

  // Before Start: the epoll and wake descriptors; listeners this loop accepts on.
  Status Init();
  void AddListener(Listener* listener);
  void Start();

  // Any thread: a new connection for this loop, accepted at `accepted_ns`.
  void Adopt(ConnPtr conn, int64_t accepted_ns);
  // Any thread: stop accepting and reading; unauthenticated connections are closed. Replies
  // still go out.
  void BeginDrain();
  // Connections with requests outstanding or replies queued, as of the last tick (draining).
  size_t busy() const { return busy_.load(); }
  // Ticks done (busy() is fresh once this grew after BeginDrain).
  uint64_t ticks() const { return ticks_.load(); }
  // Closes every connection (counting those still busy), then the thread ends.
  void Stop();
  // Any thread: the connections with requests outstanding (the heartbeat thread's list; taken
  // under this loop's registry lock, which no send ever holds).
  void Outstanding(std::vector<ConnPtr>* out);

 private:
  struct Entry {
    Entry(ConnPtr c, BufferPool* pool, uint64_t max_io_bytes, int64_t t, ProtocolSettings settings)
        : conn(std::move(c)), reader(pool, max_io_bytes), protocol(settings), accepted_ns(t) {}
    ConnPtr conn;
    FrameReader reader;
    ConnProtocol protocol;
    int64_t accepted_ns;
    // Not read: over --max-inflight-bytes or --max-app-inflight-bytes (between frames, with a
    // write's header read and its data not reserved, or with a read request held).
    bool paused = false;
    // The reader's frame is a read request whose reply's bytes did not fit (Reserve): handled
    // once they do, before anything more is read.
    bool read_held = false;
    bool read_eof = false;  // the client finished sending; closed once answered
    bool ended = false;     // EndConnection done
    int poll_fd = -1;       // the transport's PollFd as registered
    // The transport's side channel and its descriptor as registered (null, -1: none); taken
    // when the transport changes (Reregister), as its epoll registration is.
    SideChannel* side = nullptr;
    int aux_fd = -1;
    // The slow-sender rule: when the window began (0: none; it runs while a frame is
    // incomplete at every tick), and the connection's received bytes then
    // (FrameReader::received_bytes).
    int64_t frame_window_ns = 0;
    uint64_t frame_window_bytes = 0;
  };
  void Run();
  void Wake();
  // A connection that has a frame begun at every tick of a window of --send-window-ms and
  // sends below --min-send-rate over it (all its bytes, of whichever frames) holds the frame's
  // memory for nothing: true when `e` is one (queued for closing, counted).
  bool SlowSender(Entry& e, int64_t now, std::vector<std::pair<uint64_t, std::string>>* to_close,
                  uint64_t id);
  void TakeInbox();
  void AcceptAll(size_t listener);
  // Loop 0, at --max-handshakes: asks the loop of the oldest connection still in its handshake
  // to close it, when it has been in it for --handshake-evict-ms, and takes it off the count
  // at once (true: there is room for one more).
  bool EvictOldestHandshake(int64_t now);
  // The connection's loop closes a connection asked to make room, unless it is authenticated.
  bool Evicted(const ClientConn& c) const { return c.session == nullptr && c.eviction_requested(); }
  // Disarms a listener; with `retry_ns` non-zero, the tick re-arms it from then on.
  void PauseListener(size_t listener, int64_t retry_ns);
  // Flushes, resumes reading when allowed, reads.
  void Service(uint64_t id);
  void Read(uint64_t id, Entry& e);
  // Which in-flight limit, if any, keeps `c` from being read.
  enum class InflightLimit { kNone, kConnection, kApplication };
  InflightLimit OverLimit(const ClientConn& c) const;
  // Stops reading `e` for `over` (counted once a pause); over the application's limit, parks it
  // with the application, whose falling bytes wake it. The caller checks again afterwards.
  void Pause(Entry& e, InflightLimit over);
  void Resume(Entry& e);
  // Reserves `n` bytes on `e` and its application for the frame it is at, before that frame
  // costs them: a write's data, held at its header (FrameReader::kTail), before it is read; a
  // read request's reply before the request is handled. The rule is the one a connection is
  // read by (at or below --max-inflight-bytes and --max-app-inflight-bytes), the application's
  // part checked and added at once (AppInflight::AddUnlessOver), so loops reserving together
  // pass the application's limit by one frame at most. False when it does not fit: `e` is then
  // paused until it may, and the frame waits.
  bool Reserve(Entry& e, uint64_t n);
  InflightLimit TryReserve(Entry& e, uint64_t n);
  // The connection's transport changed (moved to shared memory): register its descriptors.
  void Reregister(uint64_t id, Entry& e);
  // The transport's second descriptor fired (a shared-memory client's socket).
  void AuxEvent(uint64_t id);
  void Tick(int64_t now_ns);
  // Why: logged when not empty.
  void Close(uint64_t id, const std::string& why);

  Core& core_;
  std::vector<IoLoop*>* peers_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  // Moves piped writes' bytes out of this loop's clients' pipes (null: the loop does it).
  std::unique_ptr<PipeMover> mover_;
  std::thread thread_;
  std::vector<Listener*> listeners_;
  std::vector<int64_t> listener_retry_ns_;  // 0: armed; else re-armed at that time
  int64_t accept_backoff_ns_;
  size_t next_peer_ = 0;
  int64_t last_refusal_log_ns_ = 0;
  int64_t last_handshake_log_ns_ = 0;
  uint64_t refusals_unlogged_ = 0;
  uint64_t evictions_unlogged_ = 0;
  int64_t last_eviction_log_ns_ = 0;
  // Loop 0: the connections it accepted, oldest first, while they may be in their handshake
  // (those no longer in it are dropped from the front as accepts go on).
  struct Accepted {
    int64_t accepted_ns;
    std::weak_ptr<ClientConn> conn;
  };
  std::deque<Accepted> handshakes_;
  bool drained_ = false;  // BeginDrain has been acted on (loop thread)
  std::unordered_map<uint64_t, std::unique_ptr<Entry>> conns_;  // loop thread only
  uint64_t next_id_ = 1;
  std::vector<uint64_t> again_;  // connections with more to read (budget used up)
  std::vector<uint8_t> scratch_;

  Mutex registry_mu_;
  std::unordered_map<uint64_t, ConnPtr> registry_ GUARDED_BY(registry_mu_);  // = conns_

  Mutex inbox_mu_;
  std::vector<std::pair<ConnPtr, int64_t>> inbox_ GUARDED_BY(inbox_mu_);
  std::vector<uint64_t> woken_ GUARDED_BY(inbox_mu_);
  std::atomic<bool> draining_{false};
  std::atomic<bool> stop_{false};
  std::atomic<size_t> busy_{0};
  std::atomic<uint64_t> ticks_{0};
};

}  // namespace iorelay::daemon
