// Connection loop: strict framing (any malformed frame closes this connection only), the
// challenge-response handshake, and routing of requests by op.
#include "daemon/serve_connection.h"

#include <fmt/core.h>

#include <vector>

#include "daemon/frame_reader.h"
#include "iorelay/version.h"

namespace iorelay::daemon {
namespace {

using proto::Op;

// Hello and auth messages are tiny; a bigger frame before auth is an attack or a bug.
constexpr uint32_t kPreAuthMaxPayload = 1024;

void Log(const ConnPtr& conn, const std::string& what) {
  fmt::print(stderr, "iorelayd: connection from {}: {}; closing it\n", conn->transport()->peer(),
             what);
}

// Handles kHello/kAuth. Returns false when the connection must close.
bool Handshake(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
               std::span<const uint8_t> payload, bool* hello_done, Nonce* server_nonce) {
  Op op = static_cast<Op>(h.op);
  if (op == Op::kHello) {
    if (h.version != proto::kVersion) {
      conn->ReplyError(op, h.id, EPROTONOSUPPORT);
      Log(conn, fmt::format("client speaks protocol {}, this iorelayd {} speaks {}: refused",
                            h.version, IORELAY_VERSION, proto::kVersion));
      return false;
    }
    proto::Empty m;
    if (!proto::DecodeFields(payload, &m).ok()) {
      Log(conn, "malformed hello");
      return false;
    }
    *server_nonce = RandomNonce();
    *hello_done = true;
    conn->Reply(op, h.id, proto::HelloReply{*server_nonce});
    return true;
  }
  if (op != Op::kAuth || !*hello_done) {
    conn->ReplyError(op, h.id, EACCES);
    Log(conn, fmt::format("{} before authentication", proto::OpName(op)));
    return false;
  }
  proto::AuthRequest m;
  if (!proto::DecodeFields(payload, &m).ok()) {
    Log(conn, "malformed auth");
    return false;
  }
  const Credential* cred = nullptr;
  uint32_t app_index = 0;
  for (size_t i = 0; i < core.credentials.size(); ++i) {
    // Every secret is tried; the first that verifies names the application.
    if (cred == nullptr && VerifyProof(core.credentials[i].secret, Prover::kClient, *server_nonce,
                                       m.client_nonce, m.proof)) {
      cred = &core.credentials[i];
      app_index = static_cast<uint32_t>(i);
    }
  }
  *hello_done = false;  // a nonce answers one proof only
  if (cred == nullptr) {
    conn->ReplyError(op, h.id, EACCES);
    Log(conn, "wrong credential");
    return false;
  }
  std::shared_ptr<Session> session;
  if (m.join_session != 0) {
    Result<std::shared_ptr<Session>> s =
        core.sessions.Join(m.join_session, m.join_token, app_index);
    if (!s.ok()) {
      conn->ReplyError(op, h.id, EACCES);
      Log(conn, "join of an unknown session");
      return false;
    }
    session = *s;
  } else {
    session = core.sessions.Create(app_index, cred->name, core.stats->app(app_index));
  }
  conn->session = session;
  proto::AuthReply reply;
  reply.session = session->id();
  reply.token = session->token();
  reply.app = cred->name;
  reply.heartbeat_ms = static_cast<uint32_t>(core.config.heartbeat_ms);
  reply.max_io_bytes = proto::kMaxIoBytes;
  reply.daemon_proof = ComputeProof(cred->secret, Prover::kDaemon, *server_nonce, m.client_nonce);
  conn->Reply(op, h.id, reply);
  return true;
}

// Reads the payload of an op with a tail (kPwrite, kWrite): the fields (of fixed size, so their
// largest encoding is their size) into `fields`, the data into an aligned buffer.
Status ReadWritePayload(Core& core, FrameReader& in, const proto::FrameHeader& h,
                        std::vector<uint8_t>* fields, Buffer* data, uint64_t* data_len) {
  const size_t field_bytes = proto::Info(static_cast<Op>(h.op)).max_fields;
  if (h.length < field_bytes) return Status::Protocol("write frame shorter than its fields");
  fields->resize(field_bytes);
  IORELAY_RETURN_IF_ERROR(in.ReadExact(fields->data(), field_bytes));
  *data_len = h.length - field_bytes;
  *data = core.buffers.Get(*data_len);
  if (data->data() == nullptr) return Status::FromErrno(ENOMEM, "write buffer");
  return in.ReadExact(data->data(), *data_len);
}

// Hands an authenticated request to the handler its row of the op table names.
void Route(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
           std::span<const uint8_t> payload, int64_t arrival_ns) {
  switch (proto::Info(static_cast<Op>(h.op)).handler) {
    case proto::Handler::kData:
      return SubmitDataOp(core, conn, h, payload, Buffer(), 0, arrival_ns, true);
    case proto::Handler::kLock:
      return HandleLockOp(core, conn, h, payload, arrival_ns);
    case proto::Handler::kPath:
      return HandlePathOp(core, conn, h, payload, arrival_ns);
    case proto::Handler::kFile:
    case proto::Handler::kSession:  // (hello and auth are answered before routing)
      return HandleFileOp(core, conn, h, payload, arrival_ns);
  }
}

}  // namespace

void ServeConnection(Core& core, const ConnPtr& conn) {
  FrameReader in(conn->transport());
  std::vector<uint8_t> payload;
  bool hello_done = false;
  Nonce server_nonce{};
  bool clean_eof = false;
  // Until it authenticates, a connection gets a deadline for every read: one that never
  // speaks would hold its thread for good.
  conn->transport()->SetRecvTimeout(core.config.handshake_timeout_ms);
  for (;;) {
    if (in.AtEof()) {
      if (conn->session == nullptr) {
        // Nothing of it is in flight: cut it at once (below), whether it left or timed out.
        Log(conn, fmt::format("no authentication within {} ms, or the client left",
                              core.config.handshake_timeout_ms));
        break;
      }
      clean_eof = true;
      break;
    }
    uint8_t header[proto::kHeaderBytes];
    if (!in.ReadExact(header, sizeof header).ok()) {
      Log(conn, "truncated frame header");
      break;
    }
    bool authed = conn->session != nullptr;
    Result<proto::FrameHeader> h =
        proto::DecodeHeader(header, authed ? proto::kMaxPayloadBytes : kPreAuthMaxPayload);
    if (!h.ok()) {
      Log(conn, h.status().message());
      break;
    }
    Op op = static_cast<Op>(h->op);
    if ((h->op & proto::kReplyBit) != 0 || op == Op::kHeartbeat) {
      Log(conn, "a reply or heartbeat frame from a client");
      break;
    }
    int64_t arrival_ns = core.clock.NowNs();
    if (authed && proto::Info(op).tail) {
      Buffer data;
      uint64_t data_len = 0;
      Status st = ReadWritePayload(core, in, *h, &payload, &data, &data_len);
      if (!st.ok()) {
        Log(conn, st.ToString());
        break;
      }
      conn->outstanding.fetch_add(1, std::memory_order_acq_rel);
      core.stats->CountOp(op);
      SubmitDataOp(core, conn, *h, payload, std::move(data), data_len, arrival_ns, true);
      continue;
    }
    payload.resize(h->length);
    if (!in.ReadExact(payload.data(), payload.size()).ok()) {
      Log(conn, "truncated frame payload");
      break;
    }
    if (!authed) {
      if (!Handshake(core, conn, *h, payload, &hello_done, &server_nonce)) break;
      if (conn->session != nullptr) conn->transport()->SetRecvTimeout(0);
      continue;
    }
    if (op == Op::kHello || op == Op::kAuth) {
      conn->ReplyError(op, h->id, EINVAL);  // already authenticated
      continue;
    }
    conn->outstanding.fetch_add(1, std::memory_order_acq_rel);
    core.stats->CountOp(op);
    Route(core, conn, *h, payload, arrival_ns);
    if (payload.capacity() > (1u << 20)) std::vector<uint8_t>().swap(payload);
  }
  // After a malformed frame the connection is cut at once. At a clean end of stream (the
  // client left, or the daemon stops receiving) replies still in flight may go out; the
  // socket closes when the last request lets go of the connection.
  if (!clean_eof) conn->Shutdown();
  if (conn->session != nullptr && core.sessions.Leave(conn->session)) {
    core.locks.ReleaseOwner(conn->session->id());
    conn->session->Clear();
  }
}

}  // namespace iorelay::daemon
