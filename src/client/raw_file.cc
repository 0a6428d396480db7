// Small-file reads through syscall(): the placement map is read while the interposer may be
// initialising, so libc's wrapped open/read must not be re-entered.
#include "client/raw_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/raw_close.h"

namespace iorelay::client {
namespace {

struct RawFd {
  int fd;
  ~RawFd() {
    if (fd >= 0) RawClose(fd);
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

}  // namespace iorelay::client
