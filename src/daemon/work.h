// A data request on its way through the scheduler to a backend call and back as a reply.
#pragma once

#include <cstdint>
#include <memory>

#include "daemon/buffer_pool.h"
#include "daemon/client_conn.h"
#include "daemon/open_file.h"
#include "daemon/pipe_pool.h"
#include "daemon/session.h"
#include "proto/messages.h"
#include "sched/scheduler.h"

namespace iorelay::daemon {

struct Work {
  std::shared_ptr<ClientConn> conn;
  std::shared_ptr<Session> session;
  proto::Op op = proto::Op::kPread;  // what to do: kPread, kPwrite, kRead, kWrite, kPwriteRanges
  proto::Op reply_op = proto::Op::kPread;  // the request's op, which its reply carries
  uint64_t client_id = 0;
  uint64_t handle = 0;
  std::shared_ptr<OpenFile> file;
  uint64_t offset = 0;  // kPread/kPwrite; kRead/kWrite use the file's shared offset
  uint64_t length = 0;  // bytes to read, or bytes of write data in `data`
  Buffer data;          // aligned; write payload or read destination
  PooledPipe piped;     // kPwritePiped: the first piped_bytes of the write, in a pipe of the pool
  uint64_t piped_bytes = 0;  // (the rest, if any, in `data`)
  // kPwriteRanges: the entries of the table at the start of `data` (proto::PwriteRangesRequest);
  // `offset` is the first range's, `length` the bytes of all ranges (after the table).
  uint64_t ranges = 0;
  int64_t arrival_ns = 0;
  sched::Request request;  // what the scheduler saw (id is daemon-wide)
  uint64_t dispatch = 0;   // the dispatch that served it (daemon-wide, from 1; the trace)
};

}  // namespace iorelay::daemon
