// The connection's protocol without a socket: a client's bytes are fed to ConnProtocol and the
// actions it returns are checked (the handshake, its refusals, framing at every split).
#include "daemon/conn_protocol.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/frame_mac.h"
#include "common/handshake_transcript.h"
#include "daemon/frame_reader.h"

namespace iorelay::daemon {
namespace {

using proto::Op;
using Kind = Action::Kind;

constexpr uint64_t kSession = 41;
constexpr uint64_t kToken = 0x5eed;

Nonce FixedNonce() {
  Nonce n;
  n.fill(0x42);
  return n;
}

Secret MakeSecret(uint8_t fill) {
  Secret s;
  s.fill(fill);
  return s;
}

std::vector<uint8_t> Frame(Op op, uint64_t id, std::span<const uint8_t> payload,
                           uint16_t version = proto::kVersion) {
  proto::FrameHeader h;
  h.op = static_cast<uint16_t>(op);
  h.id = id;
  h.length = static_cast<uint32_t>(payload.size());
  h.version = version;
  std::vector<uint8_t> out(proto::kHeaderBytes);
  proto::EncodeHeader(h, out.data());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::span<const uint8_t> HeaderOf(const std::vector<uint8_t>& frame) {
  return std::span<const uint8_t>(frame).first(proto::kHeaderBytes);
}
std::span<const uint8_t> PayloadOf(const std::vector<uint8_t>& frame) {
  return std::span<const uint8_t>(frame).subspan(proto::kHeaderBytes);
}

// A reply action as the bytes the client receives.
std::vector<uint8_t> ReplyBytes(const Action& a) {
  EXPECT_EQ(a.kind, Kind::kSend);
  const proto::FrameHeader h =
      proto::ReplyHeader(a.header.op, a.header.id, a.fields.size(), a.status);
  std::vector<uint8_t> out(proto::kHeaderBytes);
  proto::EncodeHeader(h, out.data());
  out.insert(out.end(), a.fields.begin(), a.fields.end());
  return out;
}

// Two credentials; the daemon's nonces are fixed so that a client's whole stream can be
// written before the daemon answers.
class ConnProtocolTest : public ::testing::Test {
 protected:
  ConnProtocolTest() {
    jobs_ = {MakeJob(1, "alpha", MakeSecret(1)), MakeJob(2, "beta", MakeSecret(2))};
  }
  static JobPtr MakeJob(uint32_t app, std::string name, Secret secret) {
    Job::Spec spec;
    spec.name = std::move(name);
    spec.secret = secret;
    spec.exports = std::make_shared<Exports>();
    return std::make_shared<Job>(app, std::move(spec), nullptr, 0);
  }
  ProtocolSettings Settings(bool over_network = false) {
    ProtocolSettings s;
    // The driver's decision, as serve_connection.cc makes it from the job table: here, the job
    // whose secret verifies the proof.
    s.authenticate = [jobs = jobs_](const proto::AuthRequest& m, const Nonce& nonce) -> JobPtr {
      for (const JobPtr& j : jobs) {
        if (VerifyProof(j->secret(), nonce, m.client_nonce, m.proof)) return j;
      }
      return nullptr;
    };
    s.over_network = over_network;
    s.heartbeat_ms = 500;
    s.max_io_bytes = 1 << 20;
    s.make_nonce = FixedNonce;
    return s;
  }
  // Feeds `bytes`, answering a kAdmit with a session as the driver does; all actions.
  static std::vector<Action> Drive(ConnProtocol& p, std::span<const uint8_t> bytes) {
    std::vector<Action> out;
    p.Feed(bytes, &out);
    while (p.state() == ConnProtocol::State::kAdmit) {
      const Actions admitted = p.Admitted(kSession, kToken);
      for (const Action& a : admitted.view()) out.push_back(a);
      p.Feed({}, &out);
    }
    return out;
  }

  std::vector<JobPtr> jobs_;
};

// The client's side, as the client library does it (ClientTranscript).
struct Client {
  explicit Client(Secret s) : secret(s) {}
  std::vector<uint8_t> Hello() {
    hello = Frame(Op::kHello, 1, {});
    return hello;
  }
  std::vector<uint8_t> Auth(const std::vector<uint8_t>& hello_reply, bool seal_wanted = false) {
    proto::HelloReply r;
    EXPECT_TRUE(proto::DecodeFields(PayloadOf(hello_reply), &r).ok());
    transcript.AddHello(HeaderOf(hello), PayloadOf(hello), HeaderOf(hello_reply),
                        PayloadOf(hello_reply));
    proto::AuthRequest m;
    m.client_nonce.fill(7);
    m.proof = ComputeProof(secret, r.server_nonce, m.client_nonce);
    m.host = "test";
    m.seal_wanted = (seal_wanted ? proto::kSealWanted : 0) | offer;
    auth = Frame(Op::kAuth, 2, proto::EncodeFields(m));
    return auth;
  }
  // False when the daemon's proof does not verify.
  bool Check(const std::vector<uint8_t>& auth_reply) {
    return transcript.AddAuth(secret, HeaderOf(auth), PayloadOf(auth), HeaderOf(auth_reply),
                              PayloadOf(auth_reply));
  }
  std::vector<uint8_t> Finished() {
    proto::FinishedRequest f;
    f.mac = transcript.Finished(secret);
    return Frame(Op::kFinished, 3, proto::EncodeFields(f));
  }

  Secret secret;
  uint32_t offer = 0;  // more bits of seal_wanted: proto::kSealOffersAesGmac
  ClientTranscript transcript{proto::kVersion};
  std::vector<uint8_t> hello, auth;
};

// Feeds a client's hello and, answered, its auth request; the actions the auth request gave.
std::vector<Action> HelloThenAuth(ConnProtocol& p, Client& c, bool seal_wanted = false) {
  std::vector<Action> out;
  p.Feed(c.Hello(), &out);
  EXPECT_EQ(out.size(), 1u);
  const std::vector<uint8_t> hello_reply = ReplyBytes(out.at(0));
  out.clear();
  p.Feed(c.Auth(hello_reply, seal_wanted), &out);
  return out;
}

// Runs a client's handshake against `p` up to the auth reply; returns that reply's bytes.
std::vector<uint8_t> HandshakeToAuthReply(ConnProtocol& p, Client& c, bool seal_wanted = false) {
  const std::vector<Action> out = HelloThenAuth(p, c, seal_wanted);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(out.at(0).kind, Kind::kAdmit);
  const Actions admitted = p.Admitted(kSession, kToken);
  EXPECT_GE(admitted.size(), 1u);
  return ReplyBytes(admitted[0]);
}

TEST_F(ConnProtocolTest, AGoodHandshakeOpensTheConnectionForRequests) {
  ConnProtocol p(Settings());
  Client c(MakeSecret(2));
  std::vector<Action> out;
  p.Feed(c.Hello(), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kSend);
  EXPECT_EQ(out[0].status, 0);
  proto::HelloReply hello;
  ASSERT_TRUE(proto::DecodeFields(out[0].fields, &hello).ok());
  EXPECT_EQ(hello.server_nonce, FixedNonce());
  EXPECT_EQ(p.state(), ConnProtocol::State::kAuth);

  const std::vector<uint8_t> hello_reply = ReplyBytes(out[0]);
  out.clear();
  p.Feed(c.Auth(hello_reply), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kAdmit);
  ASSERT_NE(out[0].job, nullptr);
  EXPECT_EQ(out[0].job->name(), "beta");  // the second job's secret
  EXPECT_EQ(out[0].join_session, 0u);

  const Actions admitted = p.Admitted(kSession, kToken);
  ASSERT_EQ(admitted.size(), 1u);  // a Unix socket: not sealed
  proto::AuthReply reply;
  ASSERT_TRUE(proto::DecodeFields(admitted[0].fields, &reply).ok());
  EXPECT_EQ(reply.session, kSession);
  EXPECT_EQ(reply.token, kToken);
  EXPECT_EQ(reply.app, "beta");
  EXPECT_EQ(reply.heartbeat_ms, 500u);
  EXPECT_EQ(reply.sealed, 0u);
  ASSERT_TRUE(c.Check(ReplyBytes(admitted[0])));  // the daemon's proof verifies
  EXPECT_EQ(p.state(), ConnProtocol::State::kFinished);

  out.clear();
  p.Feed(c.Finished(), &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(p.state(), ConnProtocol::State::kOpen);

  const std::vector<uint8_t> path = proto::EncodeFields(proto::PathRequest{"/a"});
  p.Feed(Frame(Op::kStatfs, 4, path), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kRequest);
  EXPECT_EQ(out[0].header.op, static_cast<uint16_t>(Op::kStatfs));
  EXPECT_EQ(out[0].header.id, 4u);
  EXPECT_TRUE(std::equal(path.begin(), path.end(), p.fed_fields().begin(), p.fed_fields().end()));
}

TEST_F(ConnProtocolTest, AWrongSecretIsRefusedAndClosed) {
  ConnProtocol p(Settings());
  Client c(MakeSecret(9));
  std::vector<Action> out;
  p.Feed(c.Hello(), &out);
  ASSERT_EQ(out.size(), 1u);
  const std::vector<uint8_t> hello_reply = ReplyBytes(out[0]);
  out.clear();
  p.Feed(c.Auth(hello_reply), &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, Kind::kSend);
  EXPECT_EQ(out[0].status, EACCES);
  EXPECT_EQ(out[1].kind, Kind::kClose);
  EXPECT_EQ(out[1].why, "wrong credential");
  EXPECT_EQ(p.state(), ConnProtocol::State::kClosed);
}

TEST_F(ConnProtocolTest, TheDriverDecidesWhoAndTheProtocolAsksWithTheNonceItSent) {
  std::vector<Nonce> asked;
  ProtocolSettings s = Settings();
  s.authenticate = [&asked](const proto::AuthRequest&, const Nonce& nonce) -> JobPtr {
    asked.push_back(nonce);
    return nullptr;
  };
  ConnProtocol p(s);
  Client c(MakeSecret(1));
  const std::vector<Action> out = HelloThenAuth(p, c);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0], FixedNonce());
  ASSERT_EQ(out.size(), 2u);  // nobody: refused
  EXPECT_EQ(out[0].status, EACCES);
}

TEST_F(ConnProtocolTest, AnAdmissionRefusedByTheDriverIsAnErrorAndAClose) {
  ConnProtocol p(Settings());
  Client c(MakeSecret(1));
  const std::vector<Action> out = HelloThenAuth(p, c);
  ASSERT_EQ(p.state(), ConnProtocol::State::kAdmit);
  const Actions refused = p.AdmitRefused(EUSERS, "job alpha holds its share of connections (2)");
  ASSERT_EQ(refused.size(), 2u);
  EXPECT_EQ(refused[0].status, EUSERS);
  EXPECT_EQ(refused[1].why, "job alpha holds its share of connections (2)");
  EXPECT_EQ(p.state(), ConnProtocol::State::kClosed);
}

// A man in the middle changes one byte of what one end hashes: whichever byte of the four
// handshake frames, the daemon's kFinished check fails (or the client's proof check does first).
TEST_F(ConnProtocolTest, AFlippedTranscriptByteClosesAtFinished) {
  Client probe(MakeSecret(1));
  ConnProtocol probe_p(Settings());
  const std::vector<uint8_t> auth_reply = HandshakeToAuthReply(probe_p, probe);
  const size_t hello_reply_bytes = proto::kHeaderBytes + kNonceBytes;
  // Bytes the client hashes, in order: hello, hello reply, auth, auth reply (bar the proof).
  const size_t total =
      probe.hello.size() + hello_reply_bytes + probe.auth.size() + auth_reply.size() - kProofBytes;
  for (size_t flip = 0; flip < total; ++flip) {
    SCOPED_TRACE(flip);
    ConnProtocol p(Settings());
    Client c(MakeSecret(1));
    std::vector<Action> out;
    p.Feed(c.Hello(), &out);
    std::vector<uint8_t> hello_reply = ReplyBytes(out.at(0));
    out.clear();
    p.Feed(c.Auth(hello_reply), &out);
    ASSERT_EQ(out.at(0).kind, Kind::kAdmit);
    std::vector<uint8_t> reply = ReplyBytes(p.Admitted(kSession, kToken)[0]);
    // The client's view of the four frames, one byte flipped.
    std::vector<std::vector<uint8_t>*> seen = {&c.hello, &hello_reply, &c.auth, &reply};
    size_t at = flip;
    for (std::vector<uint8_t>* f : seen) {
      const size_t hashed = f == &reply ? f->size() - kProofBytes : f->size();
      if (at < hashed) {
        (*f)[at] ^= 0x01;
        break;
      }
      at -= hashed;
    }
    Client replay(MakeSecret(1));
    replay.hello = c.hello;
    replay.auth = c.auth;
    replay.transcript.AddHello(HeaderOf(replay.hello), PayloadOf(replay.hello),
                               HeaderOf(hello_reply), PayloadOf(hello_reply));
    // The daemon's proof no longer verifies at the client; a client that went on anyway (or a
    // man in the middle who let its check pass) is refused at kFinished.
    EXPECT_FALSE(replay.Check(reply));
    proto::FinishedRequest f;
    f.mac = replay.transcript.Finished(replay.secret);
    out.clear();
    p.Feed(Frame(Op::kFinished, 3, proto::EncodeFields(f)), &out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].kind, Kind::kClose);
    EXPECT_EQ(out[0].why, "the client saw another handshake (changed on the way?)");
  }
}

// The client's whole stream (hello, auth, kFinished, two requests) cut in two at every byte
// gives the same actions as fed whole, and so does feeding it a byte at a time.
TEST_F(ConnProtocolTest, AStreamSplitAtEveryByteGivesTheSameActions) {
  Client c(MakeSecret(1));
  ConnProtocol first(Settings());
  const std::vector<uint8_t> auth_reply = HandshakeToAuthReply(first, c);
  ASSERT_TRUE(c.Check(auth_reply));
  std::vector<uint8_t> stream = c.hello;
  stream.insert(stream.end(), c.auth.begin(), c.auth.end());
  std::vector<uint8_t> pwrite = proto::EncodeFields(proto::PwriteRequest{3, 0});
  pwrite.insert(pwrite.end(), {'d', 'a', 't', 'a'});  // its data
  for (const std::vector<uint8_t>& f :
       {c.Finished(), Frame(Op::kStatfs, 4, proto::EncodeFields(proto::PathRequest{"/x"})),
        Frame(Op::kPad, 5, proto::EncodeFields(proto::PadRequest{"padding"})),
        Frame(Op::kPwrite, 6, pwrite)}) {
    stream.insert(stream.end(), f.begin(), f.end());
  }
  ConnProtocol whole_p(Settings());
  const std::vector<Action> whole = Drive(whole_p, stream);
  ASSERT_EQ(whole.size(), 5u);  // hello reply, admit, auth reply, statfs, pwrite
  EXPECT_EQ(whole[3].kind, Kind::kRequest);
  EXPECT_EQ(whole[4].kind, Kind::kRequest);
  EXPECT_EQ(whole[4].header.op, static_cast<uint16_t>(Op::kPwrite));
  auto same = [&](const std::vector<Action>& got) {
    ASSERT_EQ(got.size(), whole.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].kind, whole[i].kind);
      EXPECT_EQ(got[i].header.op, whole[i].header.op);
      EXPECT_EQ(got[i].header.id, whole[i].header.id);
      EXPECT_EQ(got[i].fields, whole[i].fields);
    }
  };
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    SCOPED_TRACE(cut);
    ConnProtocol p(Settings());
    std::vector<Action> got = Drive(p, std::span<const uint8_t>(stream).first(cut));
    for (const Action& a : Drive(p, std::span<const uint8_t>(stream).subspan(cut)))
      got.push_back(a);
    same(got);
  }
  ConnProtocol bytewise(Settings());
  std::vector<Action> got;
  for (uint8_t b : stream) {
    for (const Action& a : Drive(bytewise, std::span<const uint8_t>(&b, 1))) got.push_back(a);
  }
  same(got);
}

TEST_F(ConnProtocolTest, AnOversizeFrameBeforeAuthCloses) {
  ConnProtocol p(Settings());
  std::vector<Action> out;
  p.Feed(Frame(Op::kHello, 1, std::vector<uint8_t>(kPreAuthMaxPayload + 1)), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kClose);
  EXPECT_FALSE(out[0].why.empty());
  EXPECT_EQ(p.state(), ConnProtocol::State::kClosed);
}

TEST_F(ConnProtocolTest, AnOversizeFrameAfterAuthCloses) {
  ConnProtocol p(Settings());
  Client c(MakeSecret(1));
  ASSERT_TRUE(c.Check(HandshakeToAuthReply(p, c)));
  std::vector<Action> out;
  p.Feed(c.Finished(), &out);
  ASSERT_EQ(p.state(), ConnProtocol::State::kOpen);
  // A header announcing more than any payload may be, with none of it sent.
  proto::FrameHeader h;
  h.op = static_cast<uint16_t>(Op::kPwrite);
  h.id = 9;
  h.length = proto::kMaxPayloadBytes + 1;
  std::vector<uint8_t> header(proto::kHeaderBytes);
  proto::EncodeHeader(h, header.data());
  p.Feed(header, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kClose);
}

TEST_F(ConnProtocolTest, ARequestBeforeFinishedCloses) {
  ConnProtocol p(Settings());
  Client c(MakeSecret(1));
  ASSERT_TRUE(c.Check(HandshakeToAuthReply(p, c)));
  std::vector<Action> out;
  p.Feed(Frame(Op::kStatfs, 3, proto::EncodeFields(proto::PathRequest{"/a"})), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kClose);
  EXPECT_NE(out[0].why.find("before the handshake was confirmed"), std::string::npos);
}

TEST_F(ConnProtocolTest, ARequestBeforeHelloIsRefused) {
  ConnProtocol p(Settings());
  std::vector<Action> out;
  p.Feed(Frame(Op::kStatfs, 1, proto::EncodeFields(proto::PathRequest{"/a"})), &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].status, EACCES);
  EXPECT_EQ(out[1].kind, Kind::kClose);
}

TEST_F(ConnProtocolTest, AnotherProtocolVersionIsRefusedWithBothNamed) {
  ConnProtocol p(Settings());
  std::vector<Action> out;
  p.Feed(Frame(Op::kHello, 1, {}, proto::kVersion + 1), &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].status, EPROTONOSUPPORT);
  EXPECT_NE(out[1].why.find("client speaks protocol"), std::string::npos);
}

TEST_F(ConnProtocolTest, AnUnknownSessionToJoinIsRefused) {
  ConnProtocol p(Settings());
  Client c(MakeSecret(1));
  const std::vector<Action> out = HelloThenAuth(p, c);
  ASSERT_EQ(p.state(), ConnProtocol::State::kAdmit);
  const Actions refused = p.AdmitRefused();
  ASSERT_EQ(refused.size(), 2u);
  EXPECT_EQ(refused[0].status, EACCES);
  EXPECT_EQ(refused[1].why, "join of an unknown session");
}

// A frame as a sealed client sends it: its bytes, then their tag.
std::vector<uint8_t> Sealed(FrameSealer& sealer, std::vector<uint8_t> frame) {
  FrameMac mac = sealer.Next();
  mac.Update(frame);
  const FrameTag tag = mac.Final();
  frame.insert(frame.end(), tag.begin(), tag.end());
  return frame;
}

// Over a network the auth reply is followed by kSeal with the key both ends derive; from then
// on every frame carries its tag, and one whose tag fails closes the connection.
TEST_F(ConnProtocolTest, ANetworkConnectionIsSealedAfterTheAuthReply) {
  ConnProtocol p(Settings(/*over_network=*/true));
  Client c(MakeSecret(1));
  std::vector<Action> out = HelloThenAuth(p, c, /*seal_wanted=*/true);
  const Actions admitted = p.Admitted(kSession, kToken);
  ASSERT_EQ(admitted.size(), 2u);
  proto::AuthReply reply;
  ASSERT_TRUE(proto::DecodeFields(admitted[0].fields, &reply).ok());
  EXPECT_EQ(reply.sealed, 1u);
  ASSERT_TRUE(c.Check(ReplyBytes(admitted[0])));
  ASSERT_EQ(admitted[1].kind, Kind::kSeal);
  EXPECT_EQ(admitted[1].key, c.transcript.SealingKey(c.secret));

  FrameSealer sealer(c.transcript.SealingKey(c.secret), FrameDirection::kToDaemon);
  out.clear();
  p.Feed(Sealed(sealer, c.Finished()), &out);
  EXPECT_TRUE(out.empty());
  ASSERT_EQ(p.state(), ConnProtocol::State::kOpen);
  std::vector<uint8_t> request =
      Sealed(sealer, Frame(Op::kStatfs, 4, proto::EncodeFields(proto::PathRequest{"/a"})));
  p.Feed(request, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kRequest);
  request = Sealed(sealer, Frame(Op::kStatfs, 5, proto::EncodeFields(proto::PathRequest{"/b"})));
  request.back() ^= 1;  // its tag, changed on the way
  out.clear();
  p.Feed(request, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kClose);
  EXPECT_TRUE(out[0].integrity);
}

TEST_F(ConnProtocolTest, AUnixConnectionIsNotSealedEvenWhenAsked) {
  ConnProtocol p(Settings(/*over_network=*/false));
  Client c(MakeSecret(1));
  const std::vector<uint8_t> reply = HandshakeToAuthReply(p, c, /*seal_wanted=*/true);
  proto::AuthReply r;
  ASSERT_TRUE(proto::DecodeFields(PayloadOf(reply), &r).ok());
  EXPECT_EQ(r.sealed, 0u);
}

// The tag algorithm: AES-GMAC only when the daemon runs it (settings.aes_gmac) and the client
// offered it; the kSeal action and the auth reply say the same, and frames tagged with the
// other algorithm close the connection.
TEST_F(ConnProtocolTest, AesGmacIsChosenOnlyWhenBothEndsRunIt) {
  for (const bool daemon_has : {false, true}) {
    for (const bool client_offers : {false, true}) {
      SCOPED_TRACE(::testing::Message() << daemon_has << client_offers);
      ProtocolSettings s = Settings(/*over_network=*/true);
      s.aes_gmac = daemon_has;
      ConnProtocol p(s);
      Client c(MakeSecret(1));
      c.offer = client_offers ? proto::kSealOffersAesGmac : 0;
      std::vector<Action> out = HelloThenAuth(p, c, /*seal_wanted=*/true);
      const Actions admitted = p.Admitted(kSession, kToken);
      ASSERT_EQ(admitted.size(), 2u);
      const TagAlgorithm want =
          daemon_has && client_offers ? TagAlgorithm::kAesGmac : TagAlgorithm::kPoly1305;
      proto::AuthReply reply;
      ASSERT_TRUE(proto::DecodeFields(admitted[0].fields, &reply).ok());
      EXPECT_EQ(reply.sealed, static_cast<uint32_t>(want));
      ASSERT_TRUE(c.Check(ReplyBytes(admitted[0])));
      ASSERT_EQ(admitted[1].kind, Kind::kSeal);
      EXPECT_EQ(admitted[1].tag, want);
      if (want == TagAlgorithm::kAesGmac && !AesGmacAvailable()) continue;
      const SessionKey key = c.transcript.SealingKey(c.secret);
      FrameSealer sealer(key, FrameDirection::kToDaemon, want);
      out.clear();
      p.Feed(Sealed(sealer, c.Finished()), &out);
      EXPECT_TRUE(out.empty());
      ASSERT_EQ(p.state(), ConnProtocol::State::kOpen);
      p.Feed(Sealed(sealer, Frame(Op::kStatfs, 4, proto::EncodeFields(proto::PathRequest{"/a"}))),
             &out);
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].kind, Kind::kRequest);
      if (!AesGmacAvailable()) continue;
      // The next frame tagged with the other algorithm (under the same key and number).
      const TagAlgorithm other =
          want == TagAlgorithm::kAesGmac ? TagAlgorithm::kPoly1305 : TagAlgorithm::kAesGmac;
      FrameSealer wrong(key, FrameDirection::kToDaemon, other);
      wrong.Next();
      wrong.Next();
      out.clear();
      p.Feed(Sealed(wrong, Frame(Op::kStatfs, 5, proto::EncodeFields(proto::PathRequest{"/b"}))),
             &out);
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].kind, Kind::kClose);
      EXPECT_TRUE(out[0].integrity);
    }
  }
}

// A man in the middle who takes the client's offer out of the auth request gets the daemon to
// choose Poly1305, but the daemon hashed another auth request than the client: the daemon's
// proof fails at the client, and kFinished at the daemon.
TEST_F(ConnProtocolTest, AnOfferTakenOutOnTheWayFailsTheHandshake) {
  ProtocolSettings s = Settings(/*over_network=*/true);
  s.aes_gmac = true;
  ConnProtocol p(s);
  Client c(MakeSecret(1));
  c.offer = proto::kSealOffersAesGmac;
  std::vector<Action> out;
  p.Feed(c.Hello(), &out);
  const std::vector<uint8_t> hello_reply = ReplyBytes(out.at(0));
  std::vector<uint8_t> auth = c.Auth(hello_reply, /*seal_wanted=*/true);
  auth[auth.size() - 4] &= static_cast<uint8_t>(~proto::kSealOffersAesGmac);  // seal_wanted: last
  out.clear();
  p.Feed(auth, &out);
  ASSERT_EQ(out.at(0).kind, Kind::kAdmit);
  const Actions admitted = p.Admitted(kSession, kToken);
  ASSERT_EQ(admitted.size(), 2u);
  EXPECT_EQ(admitted[1].tag, TagAlgorithm::kPoly1305);
  EXPECT_FALSE(c.Check(ReplyBytes(admitted[0])));
  out.clear();
  FrameSealer sealer(c.transcript.SealingKey(c.secret), FrameDirection::kToDaemon);
  p.Feed(Sealed(sealer, c.Finished()), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kClose);
}

// Likewise the daemon's choice turned from AES-GMAC to Poly1305 in the auth reply: the client
// hashes another reply than the daemon, and the daemon's proof does not verify.
TEST_F(ConnProtocolTest, AChoiceTurnedOnTheWayFailsTheHandshake) {
  ProtocolSettings s = Settings(/*over_network=*/true);
  s.aes_gmac = true;
  ConnProtocol p(s);
  Client c(MakeSecret(1));
  c.offer = proto::kSealOffersAesGmac;
  const std::vector<Action> out = HelloThenAuth(p, c, /*seal_wanted=*/true);
  ASSERT_EQ(out.at(0).kind, Kind::kAdmit);
  const Actions admitted = p.Admitted(kSession, kToken);
  std::vector<uint8_t> reply = ReplyBytes(admitted[0]);
  uint8_t& sealed = reply[reply.size() - kProofBytes - 4];  // `sealed`, before the proof
  ASSERT_EQ(sealed, static_cast<uint8_t>(TagAlgorithm::kAesGmac));
  sealed = static_cast<uint8_t>(TagAlgorithm::kPoly1305);
  EXPECT_FALSE(c.Check(reply));
}

}  // namespace
}  // namespace iorelay::daemon
