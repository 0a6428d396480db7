// One frame of a connection: the challenge-response handshake, then routing of requests by op
// (any malformed frame closes this connection only); and the end of a connection.
#include "daemon/serve_connection.h"

#include <fmt/core.h>
#include <sodium.h>

#include <vector>

#include "common/frame_mac.h"
#include "daemon/shm_attach.h"
#include "iorelay/version.h"

namespace iorelay::daemon {
namespace {

using proto::Op;

// The job whose credential made the auth request's proof: the one its key id names, if that
// job still accepts connections (not revoked, not being released) and the proof verifies.
JobPtr AuthenticatedJob(Core& core, const proto::AuthRequest& m, const Nonce& server_nonce) {
  JobPtr job = core.jobs.FindByKey(m.key_id);
  if (job == nullptr || !job->accepting()) return nullptr;
  if (!VerifyProof(job->secret(), server_nonce, m.client_nonce, m.proof)) return nullptr;
  return job;
}

// Handles kHello/kAuth. Returns false when the connection must close. Both messages and the
// reply's fields go into the transcript, which the daemon's proof covers; once admitted over a
// network transport (or when the client asks for it there), both directions of `conn` are
// sealed: `in` checks the client's tags, the outgoing queue adds the daemon's.
bool Handshake(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
               std::span<const uint8_t> payload, FrameReader& in, HandshakeState* hs) {
  Op op = static_cast<Op>(h.op);
  if (op == Op::kHello) {
    if (h.version != proto::kVersion) {
      conn->ReplyError(op, h.id, EPROTONOSUPPORT);
      LogClose(conn, fmt::format("client speaks protocol {}, this iorelayd {} speaks {}: refused",
                                 h.version, IORELAY_VERSION, proto::kVersion));
      return false;
    }
    proto::Empty m;
    if (!proto::DecodeFields(payload, &m).ok()) {
      LogClose(conn, "malformed hello");
      return false;
    }
    hs->server_nonce = core.make_nonce();
    hs->hello_done = true;
    const proto::HelloReply reply{hs->server_nonce};
    const std::vector<uint8_t> fields = proto::EncodeFields(reply);
    hs->transcript.emplace(proto::kVersion);
    hs->transcript->Add(proto::HeaderBytes(h), payload);
    hs->transcript->Add(proto::HeaderBytes(proto::ReplyHeader(h.op, h.id, fields.size())), fields);
    conn->Reply(op, h.id, reply);
    return true;
  }
  if (op != Op::kAuth || !hs->hello_done) {
    conn->ReplyError(op, h.id, EACCES);
    LogClose(conn, fmt::format("{} before authentication", proto::OpName(op)));
    return false;
  }
  proto::AuthRequest m;
  if (!proto::DecodeFields(payload, &m).ok()) {
    LogClose(conn, "malformed auth");
    return false;
  }
  const JobPtr job = AuthenticatedJob(core, m, hs->server_nonce);
  hs->hello_done = false;  // a nonce answers one proof only
  if (job == nullptr) {
    conn->ReplyError(op, h.id, EACCES);
    LogClose(conn, "wrong credential");
    return false;
  }
  if (!job->TakeConnection()) {
    conn->ReplyError(op, h.id, EUSERS);
    LogClose(conn, fmt::format("job {} holds its share of connections ({})", job->name(),
                               job->shares().max_connections));
    return false;
  }
  std::shared_ptr<Session> session;
  if (m.join_session != 0) {
    Result<std::shared_ptr<Session>> s =
        core.sessions.Join(m.join_session, m.join_token, job->app());
    if (!s.ok()) {
      job->GiveConnection();
      conn->ReplyError(op, h.id, EACCES);
      LogClose(conn, "join of an unknown session");
      return false;
    }
    session = *s;
  } else {
    session = core.sessions.Create(job);
  }
  conn->session = session;
  proto::AuthReply reply;
  reply.session = session->id();
  reply.token = session->token();
  reply.app = job->name();
  reply.heartbeat_ms = static_cast<uint32_t>(core.config.heartbeat_ms);
  reply.max_io_bytes = static_cast<uint32_t>(core.config.max_io_bytes);
  const bool seal = conn->transport()->OverNetwork() && (core.config.seal || m.seal_wanted != 0);
  reply.sealed = seal ? 1 : 0;
  HandshakeTranscript& t = *hs->transcript;
  t.Add(proto::HeaderBytes(h), payload);
  std::vector<uint8_t> covered = proto::EncodeFields(reply);
  const auto reply_header = proto::HeaderBytes(proto::ReplyHeader(h.op, h.id, covered.size()));
  covered.resize(covered.size() - kProofBytes);  // the fields before daemon_proof
  t.Add(reply_header, covered);
  reply.daemon_proof = TranscriptMac(job->secret(), TranscriptMacRole::kDaemonProof, t.Digest());
  t.AddBytes(reply.daemon_proof);
  const TranscriptDigest whole = t.Digest();
  hs->expected_finished = TranscriptMac(job->secret(), TranscriptMacRole::kClientFinished, whole);
  hs->awaiting_finished = true;
  hs->transcript.reset();
  conn->Reply(op, h.id, reply);  // (the auth reply itself is not tagged; what follows is)
  if (seal) {
    const SessionKey key = TranscriptMac(job->secret(), TranscriptMacRole::kSessionKey, whole);
    conn->Seal(key);
    in.Seal(key);
  }
  return true;
}

// The first frame after the auth reply: kFinished with the client's MAC of the same transcript,
// else the connection closes before any request is served.
bool Finish(const ConnPtr& conn, const proto::FrameHeader& h, std::span<const uint8_t> payload,
            HandshakeState* hs) {
  proto::FinishedRequest m;
  if (static_cast<Op>(h.op) != Op::kFinished || !proto::DecodeFields(payload, &m).ok()) {
    LogClose(conn, fmt::format("{} before the handshake was confirmed (kFinished)",
                               proto::OpName(static_cast<Op>(h.op))));
    return false;
  }
  if (sodium_memcmp(m.mac.data(), hs->expected_finished.data(), m.mac.size()) != 0) {
    LogClose(conn, "the client saw another handshake (changed on the way?)");
    return false;
  }
  hs->awaiting_finished = false;
  return true;
}

// Hands an authenticated request to the handler its row of the op table names: data requests
// to the scheduler, the others to the handler bound from their row (HandleOp).
void Route(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
           std::span<const uint8_t> payload, int64_t arrival_ns) {
  if (proto::Info(static_cast<Op>(h.op)).handler == proto::Handler::kData) {
    return SubmitDataOp(core, conn, h, payload, Buffer(), 0, arrival_ns, MayRunInline(core));
  }
  HandleOp(core, conn, h, payload, arrival_ns);
}

}  // namespace

void LogClose(const ConnPtr& conn, const std::string& why) {
  fmt::print(stderr, "iorelayd: connection from {}: {}; closing it\n", conn->transport()->peer(),
             why);
}

bool HandleFrame(Core& core, const ConnPtr& conn, FrameReader& in, HandshakeState* hs,
                 int64_t arrival_ns) {
  const proto::FrameHeader& h = in.header();
  Op op = static_cast<Op>(h.op);
  std::vector<uint8_t>& payload = in.fields();
  if (conn->session == nullptr) return Handshake(core, conn, h, payload, in, hs);
  if (hs->awaiting_finished) return Finish(conn, h, payload, hs);
  if (proto::Info(op).tail) {
    conn->outstanding.fetch_add(1, std::memory_order_acq_rel);
    core.stats->CountOp(op);
    const uint64_t data_len = in.data_len();
    SubmitDataOp(core, conn, h, payload, in.TakeData(), data_len, arrival_ns, MayRunInline(core));
    return !conn->closed();
  }
  if (op == Op::kShmAttach) return AttachShm(core, conn, h, payload);
  if (op == Op::kPad) return true;  // framing only: nothing to do, nothing to answer
  if (op == Op::kHello || op == Op::kAuth || op == Op::kFinished) {
    conn->ReplyError(op, h.id, EINVAL);  // already authenticated
    return true;
  }
  conn->outstanding.fetch_add(1, std::memory_order_acq_rel);
  core.stats->CountOp(op);
  Route(core, conn, h, payload, arrival_ns);
  return !conn->closed();
}

void EndConnection(Core& core, const ConnPtr& conn) {
  if (conn->session == nullptr) return;
  conn->session->job_ptr()->GiveConnection();
  if (core.sessions.Leave(conn->session)) {
    core.locks.ReleaseOwner(conn->session->id());
    if (core.lock_forwarder != nullptr) core.lock_forwarder->ReleaseOwner(conn->session->id());
    conn->session->Clear();
  }
}

}  // namespace iorelay::daemon
