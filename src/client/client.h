// The process's client: configuration, one Server (pool + session) per daemon, the registry
// of open files (for fork) and of the files this process holds record locks on.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "client/config.h"
#include "client/connection.h"
#include "client/file_buffers.h"
#include "client/listed_attrs.h"
#include "client/server.h"
#include "common/mutex.h"
#include "iorelay/iorelay.h"
#include "proto/wire.h"

namespace iorelay::client {

inline int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

// How often a pool job's map file is re-read at most (IORELAY_MAP_FILE): a re-mapping reaches a
// busy file within this long.
inline constexpr int64_t kMapCheckNs = 100'000'000;

// How long the attributes of an open reply answer fstat: as NFS's attribute cache, a change
// made by another process shows after at most this long.
inline constexpr int64_t kOpenAttrsValidNs = 1'000'000'000;

// What one call sends.
struct CallRequest {
  proto::Op op = proto::Op::kPing;
  std::span<const uint8_t> fields;  // the encoded request message
  IoSpan tx{};                      // data sent after the fields (writes)
  IoSpan rx{};                      // buffers the data of a read reply lands in
  uint64_t generation = 0;          // non-zero: the session the handle belongs to
};

// What came back besides the outcome.
struct CallReply {
  std::vector<uint8_t> payload;  // the reply's fields (and its data when no rx was given)
  size_t payload_bytes = 0;      // of the reply, data included
  uint64_t generation = 0;       // of the connection's session (SessionInfo::generation)
  uint32_t max_io_bytes = 0;     // of that session
};

// One call's outcome. One error channel, the Status (OK, or the errno), and whether the daemon
// answered: an answer's errno is the application's; a call the daemon did not answer (the
// transport failed, or the daemon refused the connection) is where the direct fallback may take
// over.
struct Outcome {
  Status status;
  bool answered = false;

  static Outcome Answered(Status s) { return {std::move(s), true}; }
  static Outcome Unanswered(Status s) { return {std::move(s), false}; }
  bool ok() const { return status.ok(); }
  // 0 or -errno, as the C API returns it.
  int NegErrno() const { return status.ok() ? 0 : -status.code(); }
};

class Client {
 public:
  // Loads the credential (and a placement map) with raw syscalls; connects lazily.
  static Result<std::unique_ptr<Client>> Create(ClientConfig cfg);

  const ClientConfig& config() const { return cfg_; }
  int server_count() const { return static_cast<int>(servers_.size()); }
  Server& server(int i) { return *servers_[i]; }

  bool IsForwarded(std::string_view abs_path) const;
  // The daemon serving `path`: the node's daemon, or the path's hash under file-hash; with
  // failover, the survivor that takes a dead one's place.
  int ServerFor(std::string_view path) const;

  // A pool job's map (config().map_file, job_map.h): the daemons the job uses now; ServerFor
  // places files among them. Without a map, every daemon, always.
  bool has_map() const { return !cfg_.map_file.empty(); }
  // Re-reads the map when kMapCheckNs passed since the last read, or at once with `force`; a
  // newer epoch replaces the set of daemons in use. A map that cannot be read or parsed leaves
  // the set as it was (the pool rewrites it by rename).
  void RefreshMap(bool force);
  uint64_t map_epoch() const { return map_epoch_.load(std::memory_order_acquire); }
  bool IsActive(int server) const;
  // The daemon holding the record locks of file (dev, ino): with a map, the job's lock daemon
  // (the map's "locks", the job's first I/O node, which the pool keeps while the job holds
  // any), fixed whatever moves; else LockOwner over all daemons.
  int LockServer(uint64_t dev, uint64_t ino) const;

  // Failover (config().failover or a map, two or more daemons, no direct fallback): a daemon
  // that did not answer is dead for this process, and its place goes to the next live daemon
  // in index order (every client applies the same rule to the same dead daemon). With a map, a
  // daemon the map no longer names is not dead: its place goes to the daemons the map names.
  bool failover() const;
  void MarkDead(int server);
  // `server`, or the live daemon that takes its place; -1 when none is left.
  int Survivor(int server) const;
  // After a call on `server` went unanswered: marks it dead and returns the daemon that takes
  // its place; -1 without failover or when none is left.
  int ReplaceDead(int server);

  // One request and its reply on daemon `server`. With `generation` non-zero, a connection of
  // another session (the daemon restarted since the handle was opened) fails with EIO before
  // anything is sent.
  Outcome Call(int server, const CallRequest& request, CallReply* reply);

  // Several requests on one connection to `server`, at most `window` outstanding (the daemon
  // works on one while the next arrive); out[i] and replies[i] belong to requests[i]. A
  // request that got no answer has an unanswered outcome (the transport failed).
  void CallPipelined(int server, std::span<const CallRequest> requests, size_t window,
                     std::span<CallReply> replies, std::span<Outcome> out);

  // Sends one request without waiting for its reply (which the connection drops when it
  // arrives). Only the transport can fail it.
  Outcome Post(int server, const CallRequest& request);

  // Typed form: encodes `req`, decodes a successful reply into `rep` (may be null).
  template <class Req, class Rep>
  Outcome CallMsg(int server, proto::Op op, const Req& req, Rep* rep, uint64_t generation = 0) {
    if (!proto::StringsFit(req)) return Outcome::Answered(Status::FromErrno(ENAMETOOLONG));
    const std::vector<uint8_t> fields = proto::EncodeFields(req);
    CallReply reply;
    Outcome out = Call(server, {.op = op, .fields = fields, .generation = generation}, &reply);
    if (out.ok() && rep && !proto::DecodeFields(reply.payload, rep).ok()) {
      return Outcome::Answered(
          Status::IOError("malformed reply to " + std::string(proto::OpName(op))));
    }
    return out;
  }

  void Register(iorelay_file* f);
  void Unregister(iorelay_file* f);

  // Changes this process made to any file (writes, truncates, allocations, and path calls that
  // change attributes): an open's attributes answer fstat only while none was made since.
  void NoteChange() { changes_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t changes() const { return changes_.load(std::memory_order_relaxed); }
  // The attributes listings carried (listed_attrs.h).
  ListedAttrs& listed_attrs() { return listed_attrs_; }

  // Record locks live at the file's lock owner daemon (LockOwner), which takes them only from
  // a session that holds the file open there. When that is not the daemon holding `f`, the
  // client opens the file there once more, as the process's *lock anchor* (lock_ops.cc).
  // 0, or -errno (ENOLCK when the path now names another file).
  int EnsureLockAnchor(iorelay_file* f, int owner);
  // Record locks this process holds, by file identity.
  void NoteLocked(uint64_t dev, uint64_t ino);
  // Closing any descriptor of a file releases the process's locks on it (POSIX): asks the
  // owner to release them if the process may hold some, and closes the lock anchor. 0 or
  // -errno.
  int ReleaseLocks(iorelay_file* f);

  // Write-behind (file_buffers.h). A file took unsent bytes: the flusher thread (started once
  // per process) sends them within kWriteBehindDelayNs, and path calls flush first.
  void NoteBuffered();
  // Sends every file's unsent bytes (path calls, locks, fork, exec, exit). With `report`, a
  // failure no call can report any more (at exit, exec) is written to stderr with the path.
  // Without `wait` (_exit, which a signal handler may call), files in use are left unsent
  // (and reported). 0 or the first -errno.
  int FlushAll(bool report, bool wait = true);
  // FlushAll(false) when some file may hold unsent bytes; a relaxed load otherwise.
  void FlushIfBuffered() {
    if (buffered_.load(std::memory_order_acquire)) (void)FlushAll(false);
  }
  // Drops every file's read-ahead window (a record lock was taken or released).
  void DropWindows();
  ~Client();

  // Before fork, in the parent: files whose offset the client holds hand it to the daemon and
  // keep it there, because parent and child will share the description (see fork.cc). Unsent
  // writes are sent first, and the flusher pauses until AfterForkParent or AfterForkChild.
  void BeforeFork();
  void AfterForkParent();
  // Unchecked by the analysis: it re-creates the locks, in a child where no other thread runs.
  int AfterForkChild() NO_THREAD_SAFETY_ANALYSIS;
  int MoveInternalFd(int fd);

 private:
  std::atomic<uint64_t> changes_{0};
  ListedAttrs listed_attrs_;
  explicit Client(ClientConfig cfg) : cfg_(std::move(cfg)) {}
  // A connection to `server` of the session `generation` (0: any); errors are the transport's.
  Result<Lease> LeaseFor(int server, uint64_t generation);

  void FlusherLoop();

  ClientConfig cfg_;
  // Write-behind's flusher: a thread of this process (flusher_pid_), stopped by the destructor;
  // it skips its sweeps while a fork is under way (fork_hold_), and BeforeFork waits until it
  // is out of one (sweeping_), so that no lock it takes is held in the child.
  std::atomic<bool> buffered_{false};
  Mutex flusher_mu_;
  CondVar flusher_cv_;
  bool flusher_stop_ GUARDED_BY(flusher_mu_) = false;
  std::unique_ptr<std::thread> flusher_;
  std::atomic<int> flusher_pid_{0};
  std::atomic<int> fork_hold_{0};
  std::atomic<bool> sweeping_{false};
  Secret secret_{};
  int node_server_ = 0;  // the node's daemon (placements other than file-hash)
  // The map's daemons in use (bit i: daemon i) and epoch; the next time it is re-read.
  std::atomic<uint64_t> active_{~uint64_t{0}};
  std::atomic<uint64_t> map_epoch_{0};
  std::atomic<int64_t> next_map_check_ns_{0};
  // One reader installs a newer map at a time; it orders the stores of the atomics above, which
  // are read without it, so it guards no member.
  Mutex map_mu_;
  int lock_server_ = -1;                       // with a map: the job's first daemon at its start
  std::unique_ptr<std::atomic<bool>[]> dead_;  // per daemon, set once
  std::vector<std::unique_ptr<Server>> servers_;
  Mutex files_mu_;
  std::unordered_set<iorelay_file*> files_ GUARDED_BY(files_mu_);
  // Per locked file: whether the process may hold locks, and its lock anchor (handle 0:
  // none). Guarded by locks_mu_, which is not held across a lock request.
  struct LockState {
    bool locked = false;
    int anchor_server = -1;
    uint64_t anchor_handle = 0;
    uint64_t anchor_generation = 0;
  };
  Mutex locks_mu_;
  std::map<std::pair<uint64_t, uint64_t>, LockState> locks_ GUARDED_BY(locks_mu_);
};

}  // namespace iorelay::client

struct iorelay_client {
  std::unique_ptr<iorelay::client::Client> impl;
};

// One open file description as the client holds it. References are counted (dup).
struct iorelay_file {
  iorelay::client::Client* client = nullptr;
  // The daemon holding the handle, the handle, and the session it belongs to
  // (SessionInfo::generation). Atomic: failover moves the file while other threads use it
  // (a thread that reads a new server with an old handle fails the generation check).
  std::atomic<int> server{-1};
  std::atomic<uint64_t> handle{0};
  std::atomic<uint64_t> generation{0};
  uint64_t dev = 0, ino = 0;
  uint32_t st_mode = 0;
  std::atomic<uint32_t> max_io_bytes{1u << 20};  // the daemon's limit per request
  std::string path;
  int open_flags = 0;                // as given to open (for the direct fallback)
  std::atomic<int> status_flags{0};  // F_GETFL view
  std::atomic<int> refs{1};
  // The file offset. While `local_offset`, the client holds it: read and write go out as
  // positional requests at it and lseek(SEEK_SET/SEEK_CUR) costs no round trip. Otherwise
  // (O_APPEND, files that are not regular, a description shared with another process after
  // fork) the daemon's handle holds it and `offset` is the last value seen (for the direct
  // fallback). offset_mu serialises read, write and lseek at the offset.
  std::atomic<bool> local_offset{false};
  // Reads and writes at the daemon's offset so far: every kReclaimEvery-th asks whether the
  // description is still shared (file_io.cc), to take the offset back when it is not.
  std::atomic<uint64_t> daemon_offset_ops{0};
  // The attributes the open reply carried (set once, before the file is shared); they answer
  // fstat while `attrs_fresh`, for at most kOpenAttrsValidNs after the open, and while this
  // process changed no file. Any change through this description (write, truncate, allocate)
  // makes them stale.
  iorelay::proto::WireStat open_attrs;
  int64_t opened_ns = 0;
  uint64_t opened_changes = 0;  // the client's changes() at the open
  std::atomic<bool> attrs_fresh{false};
  // Changes (writes, truncates, allocations) made through this description, and how many of
  // them the last successful fsync covered. While they differ, close waits for the daemon's
  // answer, which carries write-back errors; otherwise close does not wait.
  std::atomic<uint64_t> changes{0};
  std::atomic<uint64_t> synced_changes{0};
  std::atomic<int64_t> offset{0};
  // They order steps on the atomics above (each also read without them), so guard no member.
  iorelay::Mutex offset_mu;
  iorelay::Mutex direct_mu;
  std::atomic<int> direct_fd{-1};  // >= 0: served directly (daemon lost)
  // The client's map epoch when the file was last placed (IORELAY_MAP_FILE): behind it, the
  // file's next call moves it to where the map places it (FollowMap).
  std::atomic<uint64_t> map_epoch{0};
  // Write-behind and read-ahead (file_buffers.h); null when the file takes neither.
  std::unique_ptr<iorelay::client::FileBuffers> buffers;
};
