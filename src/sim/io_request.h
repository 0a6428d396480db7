// The message a compute-node rank sends for one request, and gets back as the reply. It lives on
// the rank's stack: the rank waits for the reply before it issues its next request.
#pragma once

#include <cstdint>
#include <simgrid/s4u/Mailbox.hpp>

#include "sim/platform.h"
#include "sim/workload_pattern.h"

namespace iorelay::sim {

// Bytes of a request or reply without its data (the protocol's 24-byte header and fields).
inline constexpr uint64_t kMessageHeaderBytes = 64;
// IoRequest::merge_class bits: O_DIRECT, and O_SYNC/O_DSYNC (trace replay).
inline constexpr uint32_t kMergeClassDirect = 1;
inline constexpr uint32_t kMergeClassSync = 2;

struct IoRequest {
  uint32_t rank = 0;
  bool metadata = false;  // a metadata-server call (`metadata_op`), not data
  MetadataOp metadata_op = MetadataOp::kOpen;
  uint64_t directory = 0;  // a metadata call's directory (creates and unlinks change it)
  uint64_t file = 0;       // a metadata call's: the entry in `directory` it is about
  bool write = true;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint32_t merge_class = 0;  // bit 0: O_DIRECT; only requests of one class merge
  uint32_t app = 0;          // application index (the schedulers' fairness)
  uint64_t index = 0;        // the request's number within its rank (trace replay)
  bool positional = true;    // false: read/write at the file offset (dispatched alone)
  bool append = false;       // O_APPEND (dispatched alone)
  simgrid::s4u::Mailbox* reply_to = nullptr;
  uint32_t entry = 0;  // set by the I/O node: the front it arrived at (its reply leaves there)
  // Intra-node aggregation: the next request of the same message (one message carries a node's
  // requests of one step); null for a message of one request.
  IoRequest* next_in_message = nullptr;
  // Filled by the I/O node before replying.
  int error = 0;
  uint64_t bytes_done = 0;
};

// Data request `i` of `rank` in `pattern`, to be answered on `reply_to`.
inline IoRequest DataRequest(const Pattern& pattern, uint32_t rank, uint64_t i,
                             simgrid::s4u::Mailbox* reply_to) {
  IoRequest r;
  r.rank = rank;
  r.file = pattern.File(rank);
  r.write = pattern.spec.write;
  r.offset = pattern.Offset(rank, i);
  r.length = pattern.spec.request_bytes;
  r.merge_class = pattern.spec.odirect ? kMergeClassDirect : 0;
  r.reply_to = reply_to;
  return r;
}

}  // namespace iorelay::sim
