// Everything the request handlers share: configuration, backend, exports, sessions, locks,
// scheduler loop, counters and trace. One per daemon; no globals.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/counting_backend.h"
#include "common/auth.h"
#include "common/shm_ring.h"
#include "daemon/buffer_pool.h"
#include "daemon/client_conn.h"
#include "daemon/config.h"
#include "daemon/dispatcher.h"
#include "daemon/exports.h"
#include "daemon/fd_budget.h"
#include "daemon/jobs.h"
#include "daemon/lock_forwarder.h"
#include "daemon/lock_service.h"
#include "daemon/metadata_inline.h"
#include "daemon/pipe_mover.h"
#include "daemon/pipe_pool.h"
#include "daemon/session.h"
#include "daemon/stats.h"
#include "daemon/task_pool.h"
#include "daemon/trace.h"
#include "proto/wire.h"
#include "sched/clock.h"

namespace iorelay::daemon {

struct Core {
  Config config;
  // The jobs served, each with its credential and roots: admitted at start (--credential, all
  // sharing the --export roots) and by the admin channel (admin_ops.cc); the admin credential
  // is a job of its own, without roots.
  JobTable jobs;
  Mutex admin_mu;  // admin ops that change the table, one at a time (admin_ops.cc)
  // The shares a job gets when its admission does not say (from --max-open-files and the rest).
  JobShares default_shares;
  std::unique_ptr<backend::Backend> backend;
  // The backend's outermost layer, counting the calls made to it ("backend_calls").
  backend::CountingBackend* backend_counts = nullptr;
  // Relay role: locks go upstream through this instead of `locks`.
  std::unique_ptr<LockForwarder> lock_forwarder;
  // Relay role: the upstream client's counters, added to StatsJson as "relay".
  std::function<nlohmann::json()> relay_stats;
  // The --export roots, shared by the jobs admitted at start.
  std::shared_ptr<Exports> start_exports = std::make_shared<Exports>();
  // Clients' files, daemon-wide, stay out of a reserve of descriptors (set by Daemon::Start).
  FdBudget fds;
  SessionTable sessions;
  std::unique_ptr<Stats> stats;
  Trace trace;
  BufferPool buffers;
  // Piped writes' data from arrival to backend call (docs/daemon.md, Piped data): pipes of
  // 2 MiB, so that 1 MiB of unaligned memory (257 pages) fits, where the kernel allows.
  PipePool pipes{2 * kPipeBytes, kPipeBytes};
  LockService locks;
  sched::RealClock clock;
  std::unique_ptr<Dispatcher> dispatcher;
  std::unique_ptr<MetadataInline> metadata_inline;  // where metadata requests run
  std::atomic<uint64_t> next_dispatch{1};           // dispatch ids, for the trace
  // Whether bytes are moved out of and into clients' pipes by io_uring (PipeMover: each event
  // loop and worker has its own); false where io_uring is not available or pipes are off, and
  // then the daemon's threads move them themselves.
  bool async_pipe_moves = false;
  // Workers' movers that gave up waiting for a client's pipe, until their moves end (after
  // `pipes`: the moves hold pipes of the pool).
  RetiredMovers retired_movers;
  // The handshake's server nonces: fresh random ones; the session fuzz target fixes them so that
  // a recorded handshake reproduces.
  Nonce (*make_nonce)() = RandomNonce;
  // Metadata handlers (--workers threads), off the event loops. Last: destroyed first, as its
  // tasks use the rest.
  std::unique_ptr<TaskPool> handlers;
};

// Whether an event loop may run a dispatch or a metadata handler itself. Not in a relay: its
// backend call waits for the I/O node over the network, and while a worker waits the loop keeps
// reading, so the requests that arrive meanwhile queue in the scheduler and merge into the next
// dispatch.
inline bool MayRunInline(const Core& core) { return core.config.role != Role::kRelay; }

// What a finished request reports for accounting and the trace.
struct Outcome {
  int error = 0;
  uint64_t handle = 0;
  uint64_t offset = 0;
  uint64_t size = 0;        // bytes asked for
  uint64_t bytes_read = 0;  // bytes moved
  uint64_t bytes_written = 0;
  int64_t queue_ns = 0;
  // Data requests only (trace): the file, its open flags, and the dispatch that served it.
  sched::FileKey file;
  int open_flags = 0;
  uint64_t dispatch = 0;
};

// Records `o` (stats, trace) for a request that arrived at `arrival_ns`, before its reply goes:
// a client that reads the counters once it has its reply finds the request counted.
void RecordRequest(Core& core, const Session& session, proto::Op op, int64_t arrival_ns,
                   const Outcome& o);

// Ends a request's "outstanding" count once its reply is queued (draining and the move to
// shared memory wait for that count to reach 0).
void EndRequest(ClientConn& conn);

// The counters (Stats::ToJson) plus "scheduler" (its effective configuration) and
// "backend": what kStats returns and the daemon prints at exit.
nlohmann::json StatsJson(Core& core);
// What kStats returns to `session`: StatsJson for the admin and for a job given at start (the
// operator's: it shares the --export roots); a job admitted at run time sees its own counters
// only (Stats::ToJsonOf), marked "scope": "job", with the daemon's version and role.
nlohmann::json StatsJsonFor(Core& core, const Session& session);

// Handlers; each answers the request itself (now or later), recording it (RecordRequest) before
// its reply and ending it (EndRequest) after.
using ConnPtr = std::shared_ptr<ClientConn>;
// A kFile, kPath or kLock request: decoded as its row's Request and handed to the handler the
// row names (op_handlers.h, op_table.cc); any other op that reaches it is answered EINVAL.
void HandleOp(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
              std::span<const uint8_t> payload, int64_t arrival_ns);
// kPread, kRead (payload: fields), kPwrite, kWrite (fields + `data` holding the tail).
void SubmitDataOp(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
                  std::span<const uint8_t> fields, Buffer data, uint64_t data_len,
                  int64_t arrival_ns, bool may_run_inline);
// What the read request `h` (kPread, kRead, kPreadPiped; `fields` its payload) will count for
// against the in-flight limits once admitted (the reply data it may make the daemon hold), or a
// piped write (kPwritePiped: its pipe's bytes): what the event loop reserves before handling it.
// Over `max_io_bytes` counts as that (refused). 0 for other requests and undecodable fields.
uint64_t ReadReservation(const proto::FrameHeader& h, std::span<const uint8_t> fields,
                         uint64_t max_io_bytes);
// The Dispatcher's executor.
void ExecuteDispatch(Core& core, const sched::Dispatch& d, Work* const* works, size_t n,
                     int* results);

}  // namespace iorelay::daemon
