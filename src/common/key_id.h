// What names a credential without revealing it: the auth request carries the key id of the
// client's secret, so the daemon finds the one credential to check in a table that changes
// while it runs (instead of trying every secret), and the admin channel carries job secrets
// wrapped under the admin credential, so an eavesdropper on an admission learns nothing.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/auth.h"

namespace iorelay {

inline constexpr size_t kKeyIdBytes = 32;
using KeyId = std::array<uint8_t, kKeyIdBytes>;

// HMAC-SHA256(secret, "iorelay-key-id-v1"): a one-way name of the secret, the same at both ends.
KeyId KeyIdOf(const Secret& secret);
// The first 8 bytes of the key id in hex, for logs and listings.
std::string KeyIdText(const KeyId& id);

// A job secret sent on the admin channel: XOR with HMAC-SHA256(admin, "iorelay-wrap-v1" ||
// nonce), a fresh random nonce per admission. Only holders of the admin credential unwrap it;
// UnwrapSecret(admin, nonce, WrapSecret(admin, nonce, s)) == s.
Secret WrapSecret(const Secret& admin, const Nonce& nonce, const Secret& secret);
Secret UnwrapSecret(const Secret& admin, const Nonce& nonce, const Secret& wrapped);

}  // namespace iorelay
