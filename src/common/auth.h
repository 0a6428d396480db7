// Job credentials and the challenge-response by which each side proves it holds one.
// The secret never crosses the wire: the client answers a fresh server nonce with
// HMAC-SHA256(secret, "iorelay-auth-v1" || server_nonce || client_nonce), and the daemon
// answers the client's fresh nonce with the same MAC under "iorelay-auth-v1-daemon", so
// neither proof can stand for the other and a squatter on a daemon's address gets nothing.
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

// Who proves: the client (in kAuth) or the daemon (in the kAuth reply).
enum class Prover { kClient, kDaemon };

Proof ComputeProof(const Secret& secret, Prover who, const Nonce& server_nonce,
                   const Nonce& client_nonce);

// Constant-time comparison of `proof` against the expected one.
bool VerifyProof(const Secret& secret, Prover who, const Nonce& server_nonce,
                 const Nonce& client_nonce, const Proof& proof);

}  // namespace iorelay
