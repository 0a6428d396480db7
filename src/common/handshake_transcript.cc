// The handshake transcript's running hash and its MACs, on libsodium (see the header).
#include "common/handshake_transcript.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace iorelay {
namespace {

constexpr std::string_view kTranscriptContext = "iorelay-handshake-v2";

std::string_view Label(TranscriptMacRole role) {
  switch (role) {
    case TranscriptMacRole::kDaemonProof:
      return "iorelay-daemon-proof-v2";
    case TranscriptMacRole::kClientFinished:
      return "iorelay-client-finished-v2";
    case TranscriptMacRole::kSessionKey:
      return "iorelay-session-key-v2";
  }
  std::abort();
}

void Update(crypto_hash_sha256_state* st, const void* p, size_t n) {
  crypto_hash_sha256_update(st, static_cast<const unsigned char*>(p), n);
}

}  // namespace

HandshakeTranscript::HandshakeTranscript(uint16_t protocol_version) {
  if (sodium_init() < 0) std::abort();  // libsodium cannot run without a random source
  crypto_hash_sha256_init(&state_);
  Update(&state_, kTranscriptContext.data(), kTranscriptContext.size());
  const uint8_t version[2] = {static_cast<uint8_t>(protocol_version),
                              static_cast<uint8_t>(protocol_version >> 8)};
  Update(&state_, version, sizeof version);
}

void HandshakeTranscript::Add(std::span<const uint8_t> header, std::span<const uint8_t> payload) {
  AddBytes(header);
  const auto length = static_cast<uint32_t>(payload.size());
  const uint8_t size[4] = {static_cast<uint8_t>(length), static_cast<uint8_t>(length >> 8),
                           static_cast<uint8_t>(length >> 16), static_cast<uint8_t>(length >> 24)};
  Update(&state_, size, sizeof size);
  AddBytes(payload);
}

void HandshakeTranscript::AddBytes(std::span<const uint8_t> bytes) {
  if (!bytes.empty()) Update(&state_, bytes.data(), bytes.size());
}

TranscriptDigest HandshakeTranscript::Digest() const {
  crypto_hash_sha256_state copy = state_;
  TranscriptDigest d;
  crypto_hash_sha256_final(&copy, d.data());
  return d;
}

Proof TranscriptMac(const Secret& secret, TranscriptMacRole role, const TranscriptDigest& digest) {
  const std::string_view label = Label(role);
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, secret.data(), secret.size());
  crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char*>(label.data()),
                                label.size());
  crypto_auth_hmacsha256_update(&st, digest.data(), digest.size());
  Proof mac;
  crypto_auth_hmacsha256_final(&st, mac.data());
  return mac;
}

bool VerifyTranscriptMac(const Secret& secret, TranscriptMacRole role,
                         const TranscriptDigest& digest, const Proof& mac) {
  const Proof expected = TranscriptMac(secret, role, digest);
  return sodium_memcmp(expected.data(), mac.data(), mac.size()) == 0;
}

void ClientTranscript::AddHello(std::span<const uint8_t> request_header,
                                std::span<const uint8_t> request_payload,
                                std::span<const uint8_t> reply_header,
                                std::span<const uint8_t> reply_payload) {
  t_.Add(request_header, request_payload);
  t_.Add(reply_header, reply_payload);
}

bool ClientTranscript::AddAuth(const Secret& secret, std::span<const uint8_t> request_header,
                               std::span<const uint8_t> request_payload,
                               std::span<const uint8_t> reply_header,
                               std::span<const uint8_t> reply_payload) {
  if (reply_payload.size() < kProofBytes) return false;
  const size_t covered = reply_payload.size() - kProofBytes;
  Proof proof;
  std::copy(reply_payload.begin() + static_cast<std::ptrdiff_t>(covered), reply_payload.end(),
            proof.begin());
  t_.Add(request_header, request_payload);
  t_.Add(reply_header, reply_payload.first(covered));
  if (!VerifyTranscriptMac(secret, TranscriptMacRole::kDaemonProof, t_.Digest(), proof)) {
    return false;
  }
  t_.AddBytes(proof);
  whole_ = t_.Digest();
  return true;
}

Proof ClientTranscript::Finished(const Secret& secret) const {
  return TranscriptMac(secret, TranscriptMacRole::kClientFinished, whole_);
}

Proof ClientTranscript::SealingKey(const Secret& secret) const {
  return TranscriptMac(secret, TranscriptMacRole::kSessionKey, whole_);
}

}  // namespace iorelay
