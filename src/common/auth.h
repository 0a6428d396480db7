// Job credentials and the client's answer to the daemon's challenge. The secret never crosses
// the wire: the client answers a fresh server nonce with
// HMAC-SHA256(secret, "iorelay-auth-v1" || server_nonce || client_nonce), by which the daemon
// finds the job's credential. The daemon proves it holds the credential too with a MAC over the
// whole handshake (common/handshake_transcript.h), under another label, so neither proof can
// stand for the other and a squatter on a daemon's address gets nothing.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace iorelay {

inline constexpr size_t kSecretBytes = 32;
inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kProofBytes = 32;
using Secret = std::array<uint8_t, kSecretBytes>;
using Nonce = std::array<uint8_t, kNonceBytes>;
using Proof = std::array<uint8_t, kProofBytes>;

// Reads a credential file: 64 hex digits (optionally followed by a newline).
// Refuses a file that group or others may read or write (EACCES), as ssh does.
Result<Secret> LoadSecretFile(const std::string& path);

// Writes a fresh random secret to `path`, created 0600, failing if it exists.
Status CreateSecretFile(const std::string& path);

Nonce RandomNonce();

// The client's proof in kAuth.
Proof ComputeProof(const Secret& secret, const Nonce& server_nonce, const Nonce& client_nonce);

// Constant-time comparison of `proof` against the expected one.
bool VerifyProof(const Secret& secret, const Nonce& server_nonce, const Nonce& client_nonce,
                 const Proof& proof);

}  // namespace iorelay
