// One frame of a connection as its protocol sorted it: the handshake's replies and admission,
// then routing of requests by op (any malformed frame closes this connection only); and the end
// of a connection.
#include "daemon/serve_connection.h"

#include <fmt/core.h>

#include <vector>

#include "daemon/shm_attach.h"

namespace iorelay::daemon {
namespace {

using proto::Op;

// Hands an authenticated request to the handler its row of the op table names: data requests
// to the scheduler, the others to the handler bound from their row (HandleOp).
void Route(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
           std::span<const uint8_t> payload, int64_t arrival_ns) {
  if (proto::Info(static_cast<Op>(h.op)).handler == proto::Handler::kData) {
    return SubmitDataOp(core, conn, h, payload, Buffer(), 0, arrival_ns, MayRunInline(core));
  }
  HandleOp(core, conn, h, payload, arrival_ns);
}

// An authenticated request: counted as outstanding, then routed (a write with its data).
bool Request(Core& core, const ConnPtr& conn, FrameReader& in, int64_t arrival_ns) {
  const proto::FrameHeader& h = in.header();
  const Op op = static_cast<Op>(h.op);
  conn->outstanding.fetch_add(1, std::memory_order_acq_rel);
  core.stats->CountOp(op);
  if (proto::Info(op).tail) {
    const uint64_t data_len = in.data_len();
    SubmitDataOp(core, conn, h, in.fields(), in.TakeData(), data_len, arrival_ns,
                 MayRunInline(core));
  } else {
    Route(core, conn, h, in.fields(), arrival_ns);
  }
  return !conn->closed();
}

// The job whose credential made the auth request's proof: the one its key id names, if that
// job still accepts connections (not revoked, not being released) and the proof verifies.
JobPtr AuthenticatedJob(const Core& core, const proto::AuthRequest& m, const Nonce& server_nonce) {
  JobPtr job = core.jobs.FindByKey(m.key_id);
  if (job == nullptr || !job->accepting()) return nullptr;
  if (!VerifyProof(job->secret(), server_nonce, m.client_nonce, m.proof)) return nullptr;
  return job;
}

// Admits the connection to the session its auth request asked for, in its job: joined (with its
// token) or a new one. Refused when the job holds its share of connections or the session to
// join is unknown. The protocol's actions that follow (the auth reply, or the refusal).
Actions Admit(Core& core, const ConnPtr& conn, ConnProtocol& protocol, const Action& admit) {
  const JobPtr& job = admit.job;
  if (!job->TakeConnection()) {
    return protocol.AdmitRefused(EUSERS, fmt::format("job {} holds its share of connections ({})",
                                                     job->name(), job->shares().max_connections));
  }
  std::shared_ptr<Session> session;
  if (admit.join_session == 0) {
    session = core.sessions.Create(job);
  } else {
    Result<std::shared_ptr<Session>> s =
        core.sessions.Join(admit.join_session, admit.join_token, job->app());
    if (!s.ok()) {
      job->GiveConnection();
      return protocol.AdmitRefused(EACCES, "join of an unknown session");
    }
    session = *s;
  }
  conn->session = session;
  return protocol.Admitted(session->id(), session->token());
}

// Does what the protocol said of the frame `in`, in order. False when the connection must close.
bool Perform(Core& core, const ConnPtr& conn, FrameReader& in, ConnProtocol& protocol,
             const Actions& actions, int64_t arrival_ns) {
  for (const Action& a : actions.view()) {
    switch (a.kind) {
      case Action::Kind::kSend:
        conn->Send(static_cast<Op>(a.header.op), a.header.id, a.status, a.fields);
        break;
      case Action::Kind::kAdmit:  // (always the last action: the admission's follow)
        return Perform(core, conn, in, protocol, Admit(core, conn, protocol, a), arrival_ns);
      case Action::Kind::kSeal:
        conn->Seal(a.key, a.tag);
        in.Seal(a.key, a.tag);
        break;
      case Action::Kind::kRequest:
        return Request(core, conn, in, arrival_ns);
      case Action::Kind::kAttachShm:
        return AttachShm(core, conn, in.header(), in.fields());
      case Action::Kind::kClose:
        LogClose(conn, a.why);
        return false;
    }
  }
  return true;
}

}  // namespace

void LogClose(const ConnPtr& conn, const std::string& why) {
  fmt::print(stderr, "iorelayd: connection from {}: {}; closing it\n", conn->transport()->peer(),
             why);
}

ProtocolSettings ProtocolSettingsFor(const Core& core, const Connection& transport) {
  ProtocolSettings s;
  s.authenticate = [&core](const proto::AuthRequest& m, const Nonce& server_nonce) {
    return AuthenticatedJob(core, m, server_nonce);
  };
  s.over_network = transport.OverNetwork();
  s.seal = core.config.seal;
  s.aes_gmac = core.config.seal_tag_auto && AesGmacAvailable();
  s.heartbeat_ms = static_cast<uint32_t>(core.config.heartbeat_ms);
  s.max_io_bytes = static_cast<uint32_t>(core.config.max_io_bytes);
  s.make_nonce = core.make_nonce;
  return s;
}

bool HandleFrame(Core& core, const ConnPtr& conn, FrameReader& in, ConnProtocol& protocol,
                 int64_t arrival_ns) {
  // Once open, a request of a row that is not a session op is always kRequest: routed without
  // building the protocol's actions (about 130 ns a frame, 2-3% of a small request's cost).
  if (protocol.state() == ConnProtocol::State::kOpen &&
      proto::Info(static_cast<Op>(in.header().op)).handler != proto::Handler::kSession) {
    return Request(core, conn, in, arrival_ns);
  }
  return Perform(core, conn, in, protocol, protocol.OnFrame(in.header(), in.fields()), arrival_ns);
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
