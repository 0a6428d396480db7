// The kFile, kPath, kLock and kAdmin ops bound from the op table (proto/ops.h): each row's request
// is decoded once, here, as the row's Request type, and handed to its handler (op_handlers.h),
// whose typed answer is sent from here too. No op has a case of its own: a row and its handler
// suffice.
#include <array>
#include <functional>
#include <utility>

#include "daemon/frees_data.h"
#include "daemon/op_handlers.h"
#include "daemon/replier.h"

namespace iorelay::daemon {
namespace {

using proto::Op;

using Serve = void (*)(Core&, const ConnPtr&, const proto::FrameHeader&, std::span<const uint8_t>,
                       int64_t);

// Decodes `payload` as `*request`; a request that does not decode is answered EPROTO and closes
// the connection.
template <class Request>
bool Decode(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
            std::span<const uint8_t> payload, int64_t arrival_ns, Request* request) {
  if (proto::DecodeFields(payload, request).ok()) return true;
  Replier(core, conn, h, arrival_ns).Malformed();
  return false;
}

// A kFile or kPath op: its handler runs on this loop when MetadataInline allows and the request
// frees no large file's data, else on the handler pool (it may block in the backend: open, fsync,
// readdir...), and then the connection is not read until it is done. Ping always runs here.
template <Op op, class Request, class Reply,
          Answer<Reply> (*handle)(Core&, Session&, const Request&)>
void ServeMetadata(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
                   std::span<const uint8_t> payload, int64_t arrival_ns) {
  Request request;
  if (!Decode(core, conn, h, payload, arrival_ns, &request)) return;
  if (op == Op::kPing) {
    return SendAnswer(core, conn, h, arrival_ns, handle(core, *conn->session, request));
  }
  MetadataInline& rule = *core.metadata_inline;
  if (MayRunInline(core) && rule.RunOnLoop(op) && !MayFreeData<op>(core, *conn->session, request)) {
    const int64_t start = core.clock.NowNs();
    SendAnswer(core, conn, h, arrival_ns, handle(core, *conn->session, request));
    rule.Record(op, core.clock.NowNs() - start);
    return;
  }
  conn->handler_busy.store(true, std::memory_order_release);
  core.handlers->Post([&core, &rule, conn, h, request = std::move(request), arrival_ns] {
    const int64_t start = core.clock.NowNs();
    SendAnswer(core, conn, h, arrival_ns, handle(core, *conn->session, request));
    rule.Record(op, core.clock.NowNs() - start);
    conn->HandlerDone();
  });
}

// A kLock op: its handler runs on this loop (it never blocks) and answers when it can.
template <class Request, class Reply,
          void (*handle)(Core&, Session&, const Request&, AnswerLater<Reply>)>
void ServeLock(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
               std::span<const uint8_t> payload, int64_t arrival_ns) {
  Request request;
  if (!Decode(core, conn, h, payload, arrival_ns, &request)) return;
  handle(core, *conn->session, request, AnswerLater<Reply>(core, conn, h, arrival_ns));
}

// A kAdmin op: only a session of the admin credential reaches its handler (on the handler pool,
// as a metadata op that is not quick by nature); any other gets EACCES.
template <Op op, class Request, class Reply,
          Answer<Reply> (*handle)(Core&, Session&, const Request&)>
void ServeAdmin(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
                std::span<const uint8_t> payload, int64_t arrival_ns) {
  if (!conn->session->job().admin()) {
    return SendAnswer(core, conn, h, arrival_ns, Answer<Reply>(Error(EACCES, 0)));
  }
  ServeMetadata<op, Request, Reply, handle>(core, conn, h, payload, arrival_ns);
}

// An op no handler serves after the handshake (a client's kHeartbeat): EINVAL.
void Refuse(Core& core, const ConnPtr& conn, const proto::FrameHeader& h, std::span<const uint8_t>,
            int64_t arrival_ns) {
  SendAnswer(core, conn, h, arrival_ns, Answer<proto::Empty>(Error(EINVAL)));
}

// Op codes are below 64 (proto/messages.cc checks): a direct index.
constexpr std::array<Serve, 64> kServeByCode = [] {
  std::array<Serve, 64> serve{};
  serve.fill(&Refuse);
#define IORELAY_BIND_kSession(Name, Request, Reply)
#define IORELAY_BIND_kData(Name, Request, Reply)
#define IORELAY_BIND_kFile(Name, Request, Reply) \
  serve[static_cast<uint16_t>(Op::k##Name)] =    \
      &ServeMetadata<Op::k##Name, proto::Request, proto::Reply, &Handle##Name>;
#define IORELAY_BIND_kPath(Name, Request, Reply) IORELAY_BIND_kFile(Name, Request, Reply)
#define IORELAY_BIND_kAdmin(Name, Request, Reply) \
  serve[static_cast<uint16_t>(Op::k##Name)] =     \
      &ServeAdmin<Op::k##Name, proto::Request, proto::Reply, &Handle##Name>;
#define IORELAY_BIND_kLock(Name, Request, Reply) \
  serve[static_cast<uint16_t>(Op::k##Name)] =    \
      &ServeLock<proto::Request, proto::Reply, &Handle##Name>;
#define IORELAY_BIND(Name, code, name, Request, Reply, family, handler, tail) \
  IORELAY_BIND_##handler(Name, Request, Reply)
  IORELAY_PROTOCOL_OPS(IORELAY_BIND)
#undef IORELAY_BIND
#undef IORELAY_BIND_kAdmin
#undef IORELAY_BIND_kLock
#undef IORELAY_BIND_kPath
#undef IORELAY_BIND_kFile
#undef IORELAY_BIND_kData
#undef IORELAY_BIND_kSession
  return serve;
}();

}  // namespace

void HandleOp(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
              std::span<const uint8_t> payload, int64_t arrival_ns) {
  const Serve serve = h.op < kServeByCode.size() ? kServeByCode[h.op] : &Refuse;
  serve(core, conn, h, payload, arrival_ns);
}

}  // namespace iorelay::daemon
