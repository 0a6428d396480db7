// Bitmap of the client's own descriptors; raw syscalls only, so the interposer never sees them.
#include "client/internal_fds.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "common/raw_close.h"

namespace iorelay::client {
namespace {

constexpr int kMaxTrackedFd = 1 << 20;
constexpr int kWordBits = 64;
// Zero-initialised (constant initialisation, no static constructor); 128 KiB of BSS.
std::atomic<uint64_t> g_bits[kMaxTrackedFd / kWordBits];

void SetBit(int fd, bool on) {
  if (fd < 0 || fd >= kMaxTrackedFd) return;
  uint64_t mask = uint64_t{1} << (fd % kWordBits);
  if (on) {
    g_bits[fd / kWordBits].fetch_or(mask, std::memory_order_release);
  } else {
    g_bits[fd / kWordBits].fetch_and(~mask, std::memory_order_release);
  }
}

int HighBase() {
  struct rlimit rl {};
  long limit = 1024;
  if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, nullptr, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    limit = static_cast<long>(std::min<rlim_t>(rl.rlim_cur, kMaxTrackedFd));
  }
  // Half the soft limit, but at least 1024 when the limit allows it.
  long base = std::max<long>(limit / 2, std::min<long>(1024, limit - 64));
  return static_cast<int>(std::clamp<long>(base, 3, kMaxTrackedFd - 1));
}

int DupHigh(int fd) {
  return static_cast<int>(syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, HighBase()));
}

}  // namespace

int AdoptInternalFd(int fd) {
  int high = DupHigh(fd);
  if (high >= 0) {
    RawClose(fd);
    fd = high;
  } else {
    syscall(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC);
  }
  SetBit(fd, true);
  return fd;
}

Result<int> RelocateInternalFd(int fd) {
  int high = DupHigh(fd);
  if (high < 0) return Status::LastError("relocate internal descriptor");
  SetBit(high, true);
  SetBit(fd, false);
  RawClose(fd);
  return high;
}

void CloseInternalFd(int fd) {
  if (fd < 0) return;
  SetBit(fd, false);
  RawClose(fd);
}

bool IsInternalFd(int fd) {
  if (fd < 0 || fd >= kMaxTrackedFd) return false;
  return (g_bits[fd / kWordBits].load(std::memory_order_acquire) >> (fd % kWordBits)) & 1;
}

}  // namespace iorelay::client
