// Key ids and wrapped job secrets (common/key_id.h).
#include "common/key_id.h"

#include <sodium.h>

#include <string_view>

namespace iorelay {
namespace {

std::array<uint8_t, 32> Hmac(const Secret& key, std::string_view label, const uint8_t* more,
                             size_t more_len) {
  if (sodium_init() < 0) __builtin_trap();  // (cannot happen after auth.cc's own init)
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, key.data(), key.size());
  crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char*>(label.data()),
                                label.size());
  if (more_len > 0) crypto_auth_hmacsha256_update(&st, more, more_len);
  std::array<uint8_t, 32> out;
  crypto_auth_hmacsha256_final(&st, out.data());
  return out;
}

}  // namespace

KeyId KeyIdOf(const Secret& secret) { return Hmac(secret, "iorelay-key-id-v1", nullptr, 0); }

std::string KeyIdText(const KeyId& id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < 8; ++i) {
    s.push_back(kHex[id[i] >> 4]);
    s.push_back(kHex[id[i] & 15]);
  }
  return s;
}

Secret WrapSecret(const Secret& admin, const Nonce& nonce, const Secret& secret) {
  const std::array<uint8_t, 32> pad = Hmac(admin, "iorelay-wrap-v1", nonce.data(), nonce.size());
  Secret out;
  for (size_t i = 0; i < out.size(); ++i) out[i] = secret[i] ^ pad[i];
  return out;
}

Secret UnwrapSecret(const Secret& admin, const Nonce& nonce, const Secret& wrapped) {
  return WrapSecret(admin, nonce, wrapped);  // XOR with the same pad
}

}  // namespace iorelay
