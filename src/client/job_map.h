// A pool job's map (IORELAY_MAP_FILE): which of the daemons in IORELAY_SERVERS the job uses
// now, under an epoch the pool's controller raises at every change. Pure: parsing and the
// set's arithmetic; the client re-reads the file (client.cc) and moves files (file_ops.cc).
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace iorelay::client {

// At most this many daemons when a map is used (the active set is a 64-bit mask).
inline constexpr int kMaxMappedServers = 64;

struct JobMap {
  uint64_t epoch = 0;
  uint64_t active = 0;  // bit i: daemon i of IORELAY_SERVERS
  int locks = -1;       // the daemon holding the job's record locks (-1: not given)
};

// {"epoch": N, "active": [i, ...], "locks": L} with N >= 1, every i < servers (duplicates
// allowed; an empty list is an error: a job with no daemon runs direct from its start) and L,
// optional, one of the active daemons: the job's lock daemon, the same in every map of the job
// so that its processes started before and after a move agree on it.
Result<JobMap> ParseJobMap(std::string_view json, int servers);

// How many daemons the mask holds, and the index of its n-th (n < count) in index order.
int MaskCount(uint64_t mask);
int MaskNth(uint64_t mask, int n);

}  // namespace iorelay::client
