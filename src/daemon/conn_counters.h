// The daemon's connection counters, one row each: the row makes the ConnCounters member, its key
// in `iorelay stats` (Stats::ToJson) and its line in docs/daemon.md's table (checked by
// daemon_stats_test), so a counter is added in one place.
#pragma once

#include <atomic>
#include <cstdint>

#include "daemon/buffer_pool.h"

// X(member, JSON key, what it counts). Keys are connections_MEMBER, but fenced_writes, whose
// name predates the prefix and which `iorelay stats` readers know by it.
#define IORELAY_CONN_COUNTERS(X)                                                               \
  X(accepted, "connections_accepted", "connections accepted since the start")                  \
  X(open, "connections_open", "connections open now")                                          \
  X(refused_max_connections, "connections_refused_max_connections",                            \
    "connections closed at accept: `--max-connections` were open")                             \
  X(handshaking, "connections_handshaking", "connections open now and not yet authenticated")  \
  X(paused_max_handshakes, "connections_paused_max_handshakes",                                \
    "times accepting paused: `--max-handshakes` connections were in their handshake")          \
  X(closed_handshake_deadline, "connections_closed_handshake_deadline",                        \
    "connections closed unauthenticated at `--handshake-timeout-ms`")                          \
  X(closed_handshake_evicted, "connections_closed_handshake_evicted",                          \
    "handshakes closed to make room for a waiting connection (`--handshake-evict-ms`)")        \
  X(closed_slow_reader, "connections_closed_slow_reader",                                      \
    "connections closed for reading their replies slower than `--min-send-rate` over "         \
    "`--send-window-ms`")                                                                      \
  X(closed_slow_sender, "connections_closed_slow_sender",                                      \
    "connections closed for sending a frame slower than `--min-send-rate`")                    \
  X(paused_inflight_limit, "connections_paused_inflight_limit",                                \
    "times a connection was not read: it held `--max-inflight-bytes`")                         \
  X(paused_app_inflight_limit, "connections_paused_app_inflight_limit",                        \
    "times a connection was not read: its application held `--max-app-inflight-bytes`")        \
  X(closed_protocol_error, "connections_closed_protocol_error",                                \
    "connections closed for a malformed frame or a failed handshake")                          \
  X(closed_pipe_stalled, "connections_closed_pipe_stalled",                                    \
    "shared-memory connections closed for keeping their pipe locked past a piped read's wait") \
  X(closed_integrity_check, "connections_closed_integrity_check",                              \
    "sealed connections closed because a frame's tag did not match")                           \
  X(closed_at_shutdown, "connections_closed_at_shutdown",                                      \
    "connections still busy when SIGTERM's `--shutdown-timeout-ms` ran out")                   \
  X(fenced_writes, "fenced_writes", "queued writes dropped because their client was gone")     \
  X(shm_attached, "connections_shm_attached", "connections moved to shared memory")            \
  X(shm_refused, "connections_shm_refused",                                                    \
    "moves to shared memory refused (off, another namespace, not Unix, busy)")                 \
  X(shm_open, "connections_shm_open", "shared-memory connections whose rings are mapped now")  \
  X(shm_writes_in_place, "connections_shm_writes_in_place",                                    \
    "writes served from the request ring, not copied")                                         \
  X(shm_reads_in_place, "connections_shm_reads_in_place",                                      \
    "reads made into the reply ring, not copied")                                              \
  X(shm_writes_piped, "connections_shm_writes_piped", "writes spliced from the client's pipe") \
  X(shm_reads_piped, "connections_shm_reads_piped",                                            \
    "reads spliced, at least partly, to the client's pipe")                                    \
  X(shm_piped_copied, "connections_shm_piped_copied",                                          \
    "piped writes copied out because the pool had no pipe free")

// X(member, JSON key, what it holds): a ByteGauge, shown as KEY (now) and KEY_peak (the most
// since the start).
#define IORELAY_CONN_GAUGES(X)                      \
  X(receiving_bytes, "connections_receiving_bytes", \
    "bytes the frame readers reserved for write data still arriving")

namespace iorelay::daemon {

// Connections and how often each connection limit was hit (docs/daemon.md, Limits).
struct ConnCounters {
#define IORELAY_CONN_COUNTER_MEMBER(member, key, meaning) std::atomic<uint64_t> member{0};
  IORELAY_CONN_COUNTERS(IORELAY_CONN_COUNTER_MEMBER)
#undef IORELAY_CONN_COUNTER_MEMBER
#define IORELAY_CONN_GAUGE_MEMBER(member, key, meaning) ByteGauge member;
  IORELAY_CONN_GAUGES(IORELAY_CONN_GAUGE_MEMBER)
#undef IORELAY_CONN_GAUGE_MEMBER
};

}  // namespace iorelay::daemon
