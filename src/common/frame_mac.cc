// Frame tags: Poly1305 with a ChaCha20 one-time key per frame, or AES-GMAC (see frame_mac.h).
#include "common/frame_mac.h"

#include <cstdlib>
#include <string_view>
#include <utility>

namespace iorelay {

struct GmacKey {
  crypto_aead_aes256gcm_state state;
};

namespace {

// The gathering buffer a sealer keeps: a header, fields and a page of data without growing.
constexpr size_t kGmacSpareBytes = 4096 + 256;

// The 96-bit nonce of both algorithms: the direction, three zero bytes, the frame's number.
std::array<uint8_t, 12> Nonce96(FrameDirection direction, uint64_t sequence) {
  std::array<uint8_t, 12> nonce{};
  nonce[0] = static_cast<uint8_t>(direction);
  for (int i = 0; i < 8; ++i) nonce[4 + i] = static_cast<uint8_t>(sequence >> (8 * i));
  return nonce;
}

// AES-GMAC's key is not the session key itself, so that no key serves two algorithms:
// HMAC-SHA256(session key, label).
std::shared_ptr<const GmacKey> MakeGmacKey(const SessionKey& session) {
  constexpr std::string_view kLabel = "iorelay-frame-aes-gmac-v1";
  std::array<uint8_t, crypto_auth_hmacsha256_BYTES> k{};
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, session.data(), session.size());
  crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char*>(kLabel.data()),
                                kLabel.size());
  crypto_auth_hmacsha256_final(&st, k.data());
  auto key = std::make_shared<GmacKey>();
  if (crypto_aead_aes256gcm_beforenm(&key->state, k.data()) != 0) std::abort();
  sodium_memzero(k.data(), k.size());
  return key;
}

}  // namespace

bool AesGmacAvailable() {
  if (sodium_init() < 0) return false;
  return crypto_aead_aes256gcm_is_available() == 1;
}

FrameMac::FrameMac(const SessionKey& key, FrameDirection direction, uint64_t sequence)
    : key_(key), dir_(direction), sequence_(sequence) {
  StartPoly1305();
}

FrameMac::FrameMac(const SessionKey& key, std::shared_ptr<const GmacKey> gmac,
                   FrameDirection direction, uint64_t sequence, std::vector<uint8_t>* spare)
    : key_(key), dir_(direction), sequence_(sequence), gmac_(std::move(gmac)), spare_(spare) {
  gathered_.swap(*spare_);
  gathered_.clear();
}

FrameMac::FrameMac(FrameMac&& o) noexcept
    : key_(o.key_),
      dir_(o.dir_),
      sequence_(o.sequence_),
      gmac_(std::move(o.gmac_)),
      gathered_(std::move(o.gathered_)),
      spare_(std::exchange(o.spare_, nullptr)),
      state_(o.state_) {}

FrameMac& FrameMac::operator=(FrameMac&& o) noexcept {
  key_ = o.key_;
  dir_ = o.dir_;
  sequence_ = o.sequence_;
  gmac_ = std::move(o.gmac_);
  gathered_ = std::move(o.gathered_);
  spare_ = std::exchange(o.spare_, nullptr);
  state_ = o.state_;
  return *this;
}

FrameMac::~FrameMac() {
  sodium_memzero(key_.data(), key_.size());
  // The buffer back to the sealer, unless it is a large one (a frame that grew past a page).
  if (spare_ != nullptr && gathered_.capacity() <= 2 * kGmacSpareBytes) spare_->swap(gathered_);
}

void FrameMac::StartPoly1305() {
  const auto nonce = Nonce96(dir_, sequence_);
  static_assert(sizeof nonce == crypto_stream_chacha20_ietf_NONCEBYTES);
  std::array<uint8_t, crypto_onetimeauth_poly1305_KEYBYTES> one_time{};
  crypto_stream_chacha20_ietf(one_time.data(), one_time.size(), nonce.data(), key_.data());
  crypto_onetimeauth_poly1305_init(&state_, one_time.data());
  sodium_memzero(one_time.data(), one_time.size());
}

void FrameMac::Update(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return;
  if (gmac_) {
    if (gathered_.size() + bytes.size() <= kGmacMaxFrameBytes) {
      gathered_.insert(gathered_.end(), bytes.begin(), bytes.end());
      return;
    }
    // Too long for AES-GMAC: Poly1305 over everything, from the first byte.
    gmac_.reset();
    StartPoly1305();
    crypto_onetimeauth_poly1305_update(&state_, gathered_.data(), gathered_.size());
    gathered_.clear();
  }
  crypto_onetimeauth_poly1305_update(&state_, bytes.data(), bytes.size());
}

FrameTag FrameMac::Final() {
  FrameTag tag;
  if (gmac_) {
    const auto nonce = Nonce96(dir_, sequence_);
    static_assert(sizeof nonce == crypto_aead_aes256gcm_NPUBBYTES);
    static_assert(kFrameTagBytes == crypto_aead_aes256gcm_ABYTES);
    unsigned long long tag_len = 0;
    uint8_t none = 0;  // no message: the frame is all additional data
    crypto_aead_aes256gcm_encrypt_detached_afternm(&none, tag.data(), &tag_len, &none, 0,
                                                   gathered_.data(), gathered_.size(), nullptr,
                                                   nonce.data(), &gmac_->state);
    return tag;
  }
  crypto_onetimeauth_poly1305_final(&state_, tag.data());
  return tag;
}

FrameSealer::FrameSealer(const SessionKey& key, FrameDirection direction, TagAlgorithm algorithm)
    : key_(key), dir_(direction) {
  if (algorithm == TagAlgorithm::kAesGmac) {
    if (!AesGmacAvailable()) std::abort();  // the handshake offers it only where it runs
    gmac_ = MakeGmacKey(key);
    spare_.reserve(kGmacSpareBytes);
  }
}

FrameMac FrameSealer::Next() {
  if (gmac_) return FrameMac(key_, gmac_, dir_, sequence_++, &spare_);
  return FrameMac(key_, dir_, sequence_++);
}

bool TagsEqual(const FrameTag& a, const FrameTag& b) {
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace iorelay
