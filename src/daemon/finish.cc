// Accounting and tracing of every answered request.
#include "daemon/core.h"

namespace iorelay::daemon {

void RecordRequest(Core& core, const Session& session, proto::Op op, int64_t arrival_ns,
                   const Outcome& o) {
  int64_t now = core.clock.NowNs();
  int64_t latency = now - arrival_ns;
  Stats::Record(session.stats(), FamilyOf(op), o.error, o.bytes_read, o.bytes_written, o.queue_ns,
                latency - o.queue_ns);
  if (core.trace.enabled()) {
    TraceRecord r;
    r.arrival_ns = arrival_ns;
    r.completion_ns = now;
    r.session = session.id();
    r.app = session.app().c_str();
    r.dev = o.file.dev;
    r.ino = o.file.ino;
    r.op = proto::OpName(op);
    r.handle = o.handle;
    r.offset = o.offset;
    r.size = o.size;
    r.open_flags = o.open_flags;
    r.dispatch = o.dispatch;
    r.queue_ns = o.queue_ns;
    r.result = o.error != 0 ? -o.error : static_cast<int64_t>(o.bytes_read + o.bytes_written);
    core.trace.Write(r);
  }
}

void EndRequest(ClientConn& conn) { conn.outstanding.fetch_sub(1, std::memory_order_acq_rel); }

}  // namespace iorelay::daemon
