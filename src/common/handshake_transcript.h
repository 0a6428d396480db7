// The handshake's transcript and the MACs that bind to it, as TLS 1.3's Finished and Noise's
// handshake hash do: every byte of the hello and auth messages, both ways, goes into one running
// SHA-256, and the daemon's proof, the client's final confirmation (kFinished) and the session
// key are HMACs of that hash under the job credential. A man in the middle who changes any
// field — `sealed` in the auth reply, a version, the client's identity — makes the two ends
// hash different transcripts, so the daemon's proof fails at the client (before it sends a
// request) or the client's confirmation fails at the daemon (which closes).
//
// What goes in, in order (docs/security.md, "The handshake"):
//   "iorelay-handshake-v2" | u16 protocol version
//   then each frame as its 24-byte header | u32 length | payload: hello request, hello reply,
//   auth request, and the auth reply with its payload cut before daemon_proof; the daemon's
//   proof is the MAC of that hash; then the proof itself is added, and the client's
//   confirmation and the session key are MACs of the hash that follows. Each end hashes the
//   headers as sent or as received (ids, versions, statuses, lengths: every byte that means
//   something to either end).
#pragma once

#include <sodium.h>

#include <array>
#include <cstdint>
#include <span>

#include "common/auth.h"

namespace iorelay {

using TranscriptDigest = std::array<uint8_t, crypto_hash_sha256_BYTES>;

class HandshakeTranscript {
 public:
  explicit HandshakeTranscript(uint16_t protocol_version);
  // Adds one handshake frame: its header's bytes and (the covered part of) its payload.
  void Add(std::span<const uint8_t> header, std::span<const uint8_t> payload);
  // Adds raw bytes (the daemon's proof, after the reply's fields).
  void AddBytes(std::span<const uint8_t> bytes);
  // The hash of everything added so far (the transcript goes on).
  TranscriptDigest Digest() const;

 private:
  crypto_hash_sha256_state state_;
};

// What a MAC over the transcript stands for; each has its own label, so none can pass for
// another.
enum class TranscriptMacRole {
  kDaemonProof,     // in the auth reply: the daemon holds the credential and saw this transcript
  kClientFinished,  // kFinished: the client holds the credential and saw the same transcript
  kSessionKey,      // the key of the frame tags on a sealed connection (common/frame_mac.h)
};

// HMAC-SHA256(secret, label(role) || digest).
Proof TranscriptMac(const Secret& secret, TranscriptMacRole role, const TranscriptDigest& digest);

// Constant-time check of `mac` against TranscriptMac(secret, role, digest).
bool VerifyTranscriptMac(const Secret& secret, TranscriptMacRole role,
                         const TranscriptDigest& digest, const Proof& mac);

// The client's end of the transcript, for everything that speaks the client's side of the
// handshake (the client library, test clients, the fuzz target): the hello and auth exchanges
// go in as sent and as received; out come the check of the daemon's proof, then kFinished's MAC
// and the session key.
class ClientTranscript {
 public:
  explicit ClientTranscript(uint16_t protocol_version) : t_(protocol_version) {}
  // The hello request as sent (header bytes, payload) and its reply as received.
  void AddHello(std::span<const uint8_t> request_header, std::span<const uint8_t> request_payload,
                std::span<const uint8_t> reply_header, std::span<const uint8_t> reply_payload);
  // The auth request as sent and its reply as received, whose payload ends with the daemon's
  // proof: true when that proof is the MAC of the transcript under `secret` (the daemon holds
  // the credential and saw the same handshake). Then Finished and SealingKey may be asked.
  bool AddAuth(const Secret& secret, std::span<const uint8_t> request_header,
               std::span<const uint8_t> request_payload, std::span<const uint8_t> reply_header,
               std::span<const uint8_t> reply_payload);
  // kFinished's MAC, and the key of a sealed connection's tags.
  Proof Finished(const Secret& secret) const;
  Proof SealingKey(const Secret& secret) const;

 private:
  HandshakeTranscript t_;
  TranscriptDigest whole_{};  // the digest once the daemon's proof is in
};

}  // namespace iorelay
