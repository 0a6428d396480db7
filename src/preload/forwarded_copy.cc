// A forwarded file's bytes copied to a local descriptor: what the kernel or the dynamic loader
// must open itself (a program to exec, a shared object to load) cannot be read through the
// daemon.
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "preload/state.h"

namespace iorelay::preload {

int CopyForwardedFile(iorelay_file* f, int fd) {
  std::vector<char> buf(1 << 20);
  for (off_t off = 0;;) {
    const ssize_t n = iorelay_pread(f, buf.data(), buf.size(), off);
    if (n < 0) return static_cast<int>(n);
    if (n == 0) return 0;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(fd, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno != EINTR) return -errno;
      if (w > 0) done += w;
    }
    off += n;
  }
}

}  // namespace iorelay::preload
