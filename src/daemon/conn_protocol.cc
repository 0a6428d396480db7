// The connection's protocol as a state machine: the handshake's checks and transcript, then the
// sorting of frames into what the driver does with them.
#include "daemon/conn_protocol.h"

#include <fmt/core.h>
#include <sodium.h>

#include <cstring>

#include "daemon/buffer_pool.h"
#include "daemon/frame_reader.h"
#include "iorelay/version.h"

namespace iorelay::daemon {

using proto::Op;

namespace {

Action& AddReply(Actions& a, const proto::FrameHeader& request, int32_t status,
                 std::vector<uint8_t> fields = {}) {
  Action& s = a.Add(Action::Kind::kSend);
  s.header.op = request.op;
  s.header.id = request.id;
  s.status = status;
  s.fields = std::move(fields);
  return s;
}

}  // namespace

// Feed's source: the bytes given and not yet read, behind the Connection the reader reads.
struct ConnProtocol::Bytes final : public Connection {
  Result<size_t> Recv(void* buf, size_t n) override {
    const size_t take = std::min(n, queue.size() - pos);
    if (take == 0) return Status::FromErrno(EAGAIN, "no bytes fed");
    std::memcpy(buf, queue.data() + pos, take);
    pos += take;
    return take;
  }
  Result<size_t> SendSome(const struct iovec*, int) override { return size_t{0}; }
  void Shutdown() override {}
  int PollFd() const override { return -1; }
  std::string peer() const override { return "fed bytes"; }

  std::vector<uint8_t> queue;
  size_t pos = 0;
  BufferPool pool;
  FrameReader reader{&pool};
  std::vector<uint8_t> scratch = std::vector<uint8_t>(64 * 1024);
  std::vector<uint8_t> fields;  // the last frame's
};

ConnProtocol::ConnProtocol(ProtocolSettings settings) : settings_(settings) {}
ConnProtocol::~ConnProtocol() = default;

Actions ConnProtocol::Close(std::string why) {
  state_ = State::kClosed;
  Actions a;
  a.Add(Action::Kind::kClose).why = std::move(why);
  return a;
}

Actions ConnProtocol::Refuse(const proto::FrameHeader& h, int err, std::string why) {
  state_ = State::kClosed;
  Actions a;
  AddReply(a, h, err);
  a.Add(Action::Kind::kClose).why = std::move(why);
  return a;
}

Actions ConnProtocol::OnFrame(const proto::FrameHeader& h, std::span<const uint8_t> fields) {
  const Op op = static_cast<Op>(h.op);
  switch (state_) {
    case State::kOpen:
      return Open(h);
    case State::kHello:
    case State::kAuth:  // (a second hello gets a new nonce, as the first did)
      if (op == Op::kHello) return Hello(h, fields);
      if (op == Op::kAuth && state_ == State::kAuth) return Auth(h, fields);
      return Refuse(h, EACCES, fmt::format("{} before authentication", proto::OpName(op)));
    case State::kFinished:
      return Finish(h, fields);
    case State::kAdmit:  // (the driver answers kAdmit before it reads on)
    case State::kClosed:
      break;
  }
  return Close("a frame after the connection was closed");
}

Actions ConnProtocol::Hello(const proto::FrameHeader& h, std::span<const uint8_t> payload) {
  if (h.version != proto::kVersion) {
    return Refuse(h, EPROTONOSUPPORT,
                  fmt::format("client speaks protocol {}, this iorelayd {} speaks {}: refused",
                              h.version, IORELAY_VERSION, proto::kVersion));
  }
  proto::Empty m;
  if (!proto::DecodeFields(payload, &m).ok()) return Close("malformed hello");
  server_nonce_ = settings_.make_nonce();
  const proto::HelloReply reply{server_nonce_};
  std::vector<uint8_t> fields = proto::EncodeFields(reply);
  transcript_.emplace(proto::kVersion);
  transcript_->Add(proto::HeaderBytes(h), payload);
  transcript_->Add(proto::HeaderBytes(proto::ReplyHeader(h.op, h.id, fields.size())), fields);
  state_ = State::kAuth;
  Actions a;
  AddReply(a, h, 0, std::move(fields));
  return a;
}

Actions ConnProtocol::Auth(const proto::FrameHeader& h, std::span<const uint8_t> payload) {
  proto::AuthRequest m;
  if (!proto::DecodeFields(payload, &m).ok()) return Close("malformed auth");
  JobPtr job = settings_.authenticate ? settings_.authenticate(m, server_nonce_) : nullptr;
  server_nonce_ = Nonce{};  // a nonce answers one proof only
  if (job == nullptr) return Refuse(h, EACCES, "wrong credential");
  transcript_->Add(proto::HeaderBytes(h), payload);
  auth_header_ = h;
  job_ = job;
  seal_ = settings_.over_network && (settings_.seal || (m.seal_wanted & proto::kSealWanted) != 0);
  // AES-GMAC when both ends run it; the offer and the choice are in the transcript, so a man in
  // the middle who strips the offer (or turns the choice) fails the handshake.
  tag_ = settings_.aes_gmac && (m.seal_wanted & proto::kSealOffersAesGmac) != 0
             ? TagAlgorithm::kAesGmac
             : TagAlgorithm::kPoly1305;
  state_ = State::kAdmit;
  Actions a;
  Action& admit = a.Add(Action::Kind::kAdmit);
  admit.job = std::move(job);
  admit.join_session = m.join_session;
  admit.join_token = m.join_token;
  return a;
}

Actions ConnProtocol::AdmitRefused(int err, std::string why) {
  transcript_.reset();
  job_.reset();
  return Refuse(auth_header_, err, std::move(why));
}

// The auth reply: its fields up to the daemon's proof go into the transcript, the proof is the
// MAC of it, and the proof goes in too; kFinished and the session key are MACs of what follows.
Actions ConnProtocol::Admitted(uint64_t session, uint64_t token) {
  const Job& job = *job_;
  proto::AuthReply reply;
  reply.session = session;
  reply.token = token;
  reply.app = job.name();
  reply.heartbeat_ms = settings_.heartbeat_ms;
  reply.max_io_bytes = settings_.max_io_bytes;
  reply.sealed = seal_ ? static_cast<uint32_t>(tag_) : 0;
  HandshakeTranscript& t = *transcript_;
  std::vector<uint8_t> covered = proto::EncodeFields(reply);
  const auto reply_header =
      proto::HeaderBytes(proto::ReplyHeader(auth_header_.op, auth_header_.id, covered.size()));
  covered.resize(covered.size() - kProofBytes);  // the fields before daemon_proof
  t.Add(reply_header, covered);
  reply.daemon_proof = TranscriptMac(job.secret(), TranscriptMacRole::kDaemonProof, t.Digest());
  t.AddBytes(reply.daemon_proof);
  const TranscriptDigest whole = t.Digest();
  expected_finished_ = TranscriptMac(job.secret(), TranscriptMacRole::kClientFinished, whole);
  transcript_.reset();
  state_ = State::kFinished;
  Actions a;
  AddReply(a, auth_header_, 0, proto::EncodeFields(reply));  // (not tagged; what follows is)
  if (seal_) {
    const SessionKey key = TranscriptMac(job.secret(), TranscriptMacRole::kSessionKey, whole);
    Action& seal = a.Add(Action::Kind::kSeal);
    seal.key = key;
    seal.tag = tag_;
    if (bytes_) bytes_->reader.Seal(key, tag_);  // (Feed's reader checks tags from now on too)
  }
  return a;
}

// The first frame after the auth reply: kFinished with the client's MAC of the same transcript,
// else the connection closes before any request is served.
Actions ConnProtocol::Finish(const proto::FrameHeader& h, std::span<const uint8_t> payload) {
  proto::FinishedRequest m;
  if (static_cast<Op>(h.op) != Op::kFinished || !proto::DecodeFields(payload, &m).ok()) {
    return Close(fmt::format("{} before the handshake was confirmed (kFinished)",
                             proto::OpName(static_cast<Op>(h.op))));
  }
  if (sodium_memcmp(m.mac.data(), expected_finished_.data(), m.mac.size()) != 0) {
    return Close("the client saw another handshake (changed on the way?)");
  }
  state_ = State::kOpen;
  return Actions();
}

Actions ConnProtocol::Open(const proto::FrameHeader& h) {
  Actions a;
  switch (static_cast<Op>(h.op)) {
    case Op::kPad:  // framing only: nothing to do, nothing to answer
      break;
    case Op::kHello:
    case Op::kAuth:
    case Op::kFinished:
      AddReply(a, h, EINVAL);  // already authenticated
      break;
    case Op::kShmAttach:
      a.Add(Action::Kind::kAttachShm).header = h;
      break;
    default:
      a.Add(Action::Kind::kRequest).header = h;
      break;
  }
  return a;
}

void ConnProtocol::Feed(std::span<const uint8_t> bytes, std::vector<Action>* out) {
  if (!bytes_) bytes_ = std::make_unique<Bytes>();
  Bytes& b = *bytes_;
  b.queue.insert(b.queue.end(), bytes.begin(), bytes.end());
  while (state_ != State::kAdmit && state_ != State::kClosed) {
    b.reader.NewTurn();
    b.reader.ReceiveUntilEmpty();
    const FrameReader::Step step = b.reader.Next(&b, authenticated(), b.scratch);
    if (step == FrameReader::Step::kAgain) break;
    Actions a;
    if (step != FrameReader::Step::kFrame) {
      a = Close(step == FrameReader::Step::kEof ? "end of stream" : b.reader.error());
    } else {
      b.fields = b.reader.fields();
      b.pool.Put(b.reader.TakeData());
      a = OnFrame(b.reader.header(), b.fields);
    }
    for (const Action& x : a.view()) {
      out->push_back(x);
      if (x.kind == Action::Kind::kClose) out->back().integrity = b.reader.integrity_failed();
    }
  }
  if (b.pos == b.queue.size()) {
    b.queue.clear();
    b.pos = 0;
  }
}

std::span<const uint8_t> ConnProtocol::fed_fields() const {
  return bytes_ ? std::span<const uint8_t>(bytes_->fields) : std::span<const uint8_t>();
}

}  // namespace iorelay::daemon
