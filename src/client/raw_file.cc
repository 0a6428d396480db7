// Small-file reads through syscall(): the credential and placement map are read while the
// interposer may be initialising, so libc's wrapped open/read must not be re-entered.
#include "client/raw_file.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace iorelay::client {
namespace {

struct RawFd {
  int fd;
  ~RawFd() {
    if (fd >= 0) syscall(SYS_close, fd);
  }
};

}  // namespace

Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  RawFd f{static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW))};
  if (f.fd < 0) return Status::LastError(path);
  std::string out;
  char buf[4096];
  for (;;) {
    long n = syscall(SYS_read, f.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::LastError(path);
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) return Status::FromErrno(EFBIG, path + " is too large");
  }
}

Result<Secret> LoadSecretRaw(const std::string& path) {
  RawFd f{static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW))};
  if (f.fd < 0) return Status::LastError("credential file " + path);
  struct stat st {};
  if (syscall(SYS_fstat, f.fd, &st) != 0) return Status::LastError("credential file " + path);
  if ((st.st_mode & 077) != 0) {
    return Status::FromErrno(EACCES,
                             "credential file " + path + " may be read by others (chmod 600 it)");
  }
  char text[2 * kSecretBytes + 3];
  long n;
  do {
    n = syscall(SYS_read, f.fd, text, sizeof text);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Status::LastError("credential file " + path);
  size_t len = static_cast<size_t>(n);
  while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r')) --len;
  Secret secret;
  size_t out_len = 0;
  if (len != 2 * kSecretBytes ||
      sodium_hex2bin(secret.data(), secret.size(), text, len, nullptr, &out_len, nullptr) != 0 ||
      out_len != kSecretBytes) {
    return Status::InvalidArgument("credential file " + path + " must hold 64 hex digits");
  }
  sodium_memzero(text, sizeof text);
  return secret;
}

}  // namespace iorelay::client
