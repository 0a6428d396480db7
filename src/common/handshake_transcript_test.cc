// The transcript binds every byte of the handshake: a change anywhere (a field, a length, the
// order, the version) gives another daemon proof, and the three MACs under one credential never
// stand for one another or for the client's proof.
#include "common/handshake_transcript.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace iorelay {
namespace {

// A handshake's four frames as the transcript sees them (hello, hello reply, auth, auth reply):
// headers first, then payloads.
using Messages = std::vector<std::vector<uint8_t>>;

Messages Sample() {
  Messages m = {std::vector<uint8_t>(24, 1),
                std::vector<uint8_t>(24, 2),
                std::vector<uint8_t>(24, 3),
                std::vector<uint8_t>(24, 4),
                {},
                std::vector<uint8_t>(32, 0xAB),
                std::vector<uint8_t>(90, 0x11),
                std::vector<uint8_t>(40, 0x22)};
  for (size_t i = 0; i < m[6].size(); ++i) m[6][i] = static_cast<uint8_t>(i * 7);
  return m;
}

TranscriptDigest DigestOf(const Messages& m, uint16_t version = 9) {
  HandshakeTranscript t(version);
  for (size_t i = 0; i < 4; ++i) t.Add(m[i], m[4 + i]);
  return t.Digest();
}

TEST(HandshakeTranscriptTest, EveryByteCounts) {
  const Secret secret{1, 2, 3};
  const Messages base = Sample();
  const Proof proof = TranscriptMac(secret, TranscriptMacRole::kDaemonProof, DigestOf(base));
  for (size_t msg = 0; msg < base.size(); ++msg) {
    for (size_t i = 0; i < base[msg].size(); ++i) {
      Messages changed = base;
      changed[msg][i] ^= 0x01;
      EXPECT_FALSE(
          VerifyTranscriptMac(secret, TranscriptMacRole::kDaemonProof, DigestOf(changed), proof))
          << "part " << msg << " byte " << i;
    }
  }
  EXPECT_TRUE(VerifyTranscriptMac(secret, TranscriptMacRole::kDaemonProof, DigestOf(base), proof));
}

TEST(HandshakeTranscriptTest, LengthsOrderAndVersionCount) {
  const Messages base = Sample();
  Messages moved = base;  // one byte moved from the auth request to the hello: same bytes in all
  moved[4].push_back(moved[6].front());
  moved[6].erase(moved[6].begin());
  EXPECT_NE(DigestOf(moved), DigestOf(base));
  Messages swapped = base;
  std::swap(swapped[6], swapped[7]);
  EXPECT_NE(DigestOf(swapped), DigestOf(base));
  EXPECT_NE(DigestOf(base, 8), DigestOf(base, 9));
  EXPECT_EQ(DigestOf(base), DigestOf(base));
}

TEST(HandshakeTranscriptTest, DigestLeavesTheTranscriptGoingOn) {
  HandshakeTranscript t(9), u(9);
  const std::vector<uint8_t> h(24, 9), a = {1, 2, 3}, b = {4, 5};
  t.Add(h, a);
  (void)t.Digest();
  t.AddBytes(b);
  u.Add(h, a);
  u.AddBytes(b);
  EXPECT_EQ(t.Digest(), u.Digest());
}

TEST(HandshakeTranscriptTest, RolesAndTheClientProofNeverStandForOneAnother) {
  const Secret secret{7};
  const TranscriptDigest d = DigestOf(Sample());
  std::set<Proof> macs = {TranscriptMac(secret, TranscriptMacRole::kDaemonProof, d),
                          TranscriptMac(secret, TranscriptMacRole::kClientFinished, d),
                          TranscriptMac(secret, TranscriptMacRole::kSessionKey, d)};
  Nonce sn{}, cn{};
  std::copy(d.begin(), d.end(), sn.begin());
  macs.insert(ComputeProof(secret, sn, cn));
  EXPECT_EQ(macs.size(), 4u);
  const Secret other{8};
  EXPECT_FALSE(VerifyTranscriptMac(other, TranscriptMacRole::kDaemonProof, d,
                                   TranscriptMac(secret, TranscriptMacRole::kDaemonProof, d)));
}

// The client's helper computes what the daemon does by hand: it accepts the daemon's proof of
// the same frames (the auth reply's payload ending with it), refuses one of other frames, and
// its kFinished MAC and session key are the daemon's.
TEST(ClientTranscriptTest, AgreesWithTheDaemonsTranscript) {
  const Secret secret{4, 5, 6};
  const Messages m = Sample();
  HandshakeTranscript daemon(9);
  for (size_t i = 0; i < 4; ++i) daemon.Add(m[i], m[4 + i]);
  const Proof proof = TranscriptMac(secret, TranscriptMacRole::kDaemonProof, daemon.Digest());
  daemon.AddBytes(proof);
  std::vector<uint8_t> reply = m[7];  // the auth reply's payload as sent: covered, then the proof
  reply.insert(reply.end(), proof.begin(), proof.end());

  ClientTranscript client(9);
  client.AddHello(m[0], m[4], m[1], m[5]);
  ASSERT_TRUE(client.AddAuth(secret, m[2], m[6], m[3], reply));
  EXPECT_EQ(client.Finished(secret),
            TranscriptMac(secret, TranscriptMacRole::kClientFinished, daemon.Digest()));
  EXPECT_EQ(client.SealingKey(secret),
            TranscriptMac(secret, TranscriptMacRole::kSessionKey, daemon.Digest()));

  ClientTranscript other(9);
  Messages changed = m;
  changed[5][0] ^= 1;  // the hello reply's nonce, changed on the way
  other.AddHello(changed[0], changed[4], changed[1], changed[5]);
  EXPECT_FALSE(other.AddAuth(secret, m[2], m[6], m[3], reply));
  ClientTranscript wrong_secret(9);
  wrong_secret.AddHello(m[0], m[4], m[1], m[5]);
  EXPECT_FALSE(wrong_secret.AddAuth(Secret{7}, m[2], m[6], m[3], reply));
  ClientTranscript short_reply(9);
  EXPECT_FALSE(short_reply.AddAuth(secret, m[2], m[6], m[3], std::vector<uint8_t>(8)));
}

}  // namespace
}  // namespace iorelay
