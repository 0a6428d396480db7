// How a job ends: revoked (by the admin or its lease running out), its connections close
// within a tick of the event loops, its queued writes are dropped and counted, and with its
// sessions go its locks and its files; or released, its connections closed once each has
// answered what it was asked, then removed. docs/security.md, "Revocation, leases, release".
#pragma once

#include <chrono>
#include <string>

#include "daemon/core.h"

namespace iorelay::daemon {

// Revokes the job named `name` (ENOENT when there is none).
Status RevokeJob(Core& core, const std::string& name);

// Revokes the jobs whose lease ran out; the heartbeat thread calls it every period.
void RevokeExpiredJobs(Core& core);

// Refuses new connections of the job, reads no new request from its connections (io_loop.cc),
// closes each once it has nothing outstanding, and removes the job once none is left; past
// `timeout` the job is revoked instead (ETIMEDOUT). Blocks the calling thread (an admin handler)
// until then.
Status ReleaseJob(Core& core, const std::string& name, std::chrono::milliseconds timeout);

// The event loop's question for each authenticated connection at its tick: close it now?
// (its job was revoked, or is released and the connection is idle and, with
// keep_offset_files (--release-keeps-offset-files), holds no file whose offset the daemon
// keeps).
bool JobEndsConnection(ClientConn& conn, bool keep_offset_files);

// Whether the event loop reads new requests from a connection of a job that no longer accepts
// them: with keep_offset_files, a released job's connection while its session holds a file
// whose offset the daemon keeps (O_APPEND, shared after fork), which stays here until closed,
// within the release's timeout; never a revoked job's.
bool ReleaseServesConnection(ClientConn& conn, bool keep_offset_files);

// The bytes in flight the connection's job may hold over all its connections before they stop
// being read (its share, set at admission; --max-app-inflight-bytes by default).
// Unbounded before authentication (no job yet, and nothing of a job's in flight).
inline uint64_t JobInflightShare(const ClientConn& conn) {
  if (conn.session == nullptr) return UINT64_MAX;
  const uint64_t share = conn.session->job().shares().max_inflight_bytes;
  return share == 0 ? UINT64_MAX : share;
}

}  // namespace iorelay::daemon
