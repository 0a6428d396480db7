// Credential files and HMAC challenge-response, on libsodium.
#include "common/auth.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#include "common/raw_close.h"

namespace iorelay {
namespace {

// Domain separation: the client's proof can never pass for another MAC under the credential.
constexpr std::string_view kClientContext = "iorelay-auth-v1";

void EnsureSodium() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (sodium_init() < 0) abort();  // libsodium cannot run without a random source
  });
}

}  // namespace

// Raw system calls, not libc's open/read: the client reads its credential inside
// applications whose open/read/close an interposer wraps, possibly while it initialises.
Result<Secret> LoadSecretFile(const std::string& path) {
  int fd = static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd < 0) return Status::LastError("credential file " + path);
  struct FdCloser {
    int fd;
    ~FdCloser() { RawClose(fd); }
  } closer{fd};
  struct stat st {};
  if (syscall(SYS_fstat, fd, &st) != 0) return Status::LastError("credential file " + path);
  if ((st.st_mode & 077) != 0) {
    return Status::FromErrno(EACCES,
                             "credential file " + path + " may be read by others (chmod 600 it)");
  }
  char text[2 * kSecretBytes + 3];
  long n;
  do {
    n = syscall(SYS_read, fd, text, sizeof text);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Status::LastError("credential file " + path);
  size_t len = static_cast<size_t>(n);
  while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r')) --len;
  Secret secret;
  size_t out_len = 0;
  bool ok =
      len == 2 * kSecretBytes &&
      sodium_hex2bin(secret.data(), secret.size(), text, len, nullptr, &out_len, nullptr) == 0 &&
      out_len == kSecretBytes;
  sodium_memzero(text, sizeof text);
  if (!ok) return Status::InvalidArgument("credential file " + path + " must hold 64 hex digits");
  return secret;
}

Status CreateSecretFile(const std::string& path) {
  EnsureSodium();
  Secret secret;
  randombytes_buf(secret.data(), secret.size());
  char hex[2 * kSecretBytes + 1];
  sodium_bin2hex(hex, sizeof hex, secret.data(), secret.size());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::LastError("create credential " + path);
  std::string line = std::string(hex) + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  Status s = ok ? Status::Ok() : Status::LastError("write credential " + path);
  ::close(fd);
  sodium_memzero(hex, sizeof hex);
  return s;
}

Nonce RandomNonce() {
  EnsureSodium();
  Nonce n;
  randombytes_buf(n.data(), n.size());
  return n;
}

Proof ComputeProof(const Secret& secret, const Nonce& server_nonce, const Nonce& client_nonce) {
  EnsureSodium();
  const std::string_view context = kClientContext;
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, secret.data(), secret.size());
  crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char*>(context.data()),
                                context.size());
  crypto_auth_hmacsha256_update(&st, server_nonce.data(), server_nonce.size());
  crypto_auth_hmacsha256_update(&st, client_nonce.data(), client_nonce.size());
  Proof p;
  crypto_auth_hmacsha256_final(&st, p.data());
  return p;
}

bool VerifyProof(const Secret& secret, const Nonce& server_nonce, const Nonce& client_nonce,
                 const Proof& proof) {
  Proof expected = ComputeProof(secret, server_nonce, client_nonce);
  return sodium_memcmp(expected.data(), proof.data(), proof.size()) == 0;
}

}  // namespace iorelay
