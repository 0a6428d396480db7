// mmap of a forwarded descriptor, which has no kernel file behind it. A private mapping is an
// anonymous one filled with the file's bytes, read through the client: POSIX leaves unspecified
// whether a private mapping shows the file's later changes, and its own changes never reach the
// file, so a copy made at mmap time is one. A shared mapping stays ENODEV: a copy could neither
// write back nor show the file's later writes (a reader that maps read-only and writes with
// pwrite, as LMDB does, would read stale bytes).
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client/env_table.h"
#include "common/units.h"
#include "preload/libc_next.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

void* MapFail(int e) {
  errno = e;
  return MAP_FAILED;
}

// The largest private mapping made as a copy (IORELAY_MMAP_COPY_MAX, a size such as "4GiB";
// 1 GiB by default): the copy is read whole and held in memory, so a mapping of a huge file,
// made to touch a few pages of it, would read it all and could exhaust the node's memory.
// Larger ones stay ENODEV, the answer of a file system that cannot map files.
uint64_t CopyLimit() {
  static const uint64_t limit = [] {
    const char* text = iorelay::client::ReadEnv(iorelay::client::EnvVarId::kMmapCopyMax);
    if (text == nullptr) return uint64_t{1} << 30;
    iorelay::Result<uint64_t> bytes = iorelay::units::ParseBytes(text);
    if (bytes.ok()) return *bytes;
    fprintf(stderr, "iorelay: IORELAY_MMAP_COPY_MAX=%s: %s; no mapping is copied\n", text,
            bytes.status().ToString().c_str());
    return uint64_t{0};
  }();
  return limit;
}

// Fills `len` bytes at `map` from `f` at `off`, up to the end of the file (the rest stays zero,
// where the kernel would raise SIGBUS on a page past the end). Whole pages are asked for, so an
// O_DIRECT descriptor's reads stay aligned. 0 or -errno.
int Fill(iorelay_file* f, char* map, size_t len, off64_t off, size_t page) {
  const size_t want = (len + page - 1) / page * page;
  size_t done = 0;
  while (done < len) {
    const ssize_t n = iorelay_pread(f, map + done, want - done, off + static_cast<off64_t>(done));
    if (n < 0) return static_cast<int>(n);
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return 0;
}

void* MapForwarded(void* addr, size_t len, int prot, int flags, int fd, off64_t off) {
  if ((flags & MAP_TYPE) != MAP_PRIVATE) return MapFail(ENODEV);
  if ((flags & MAP_HUGETLB) != 0) return MapFail(EINVAL);  // (not a hugetlbfs file)
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  if (len == 0 || off < 0 || static_cast<size_t>(off) % page != 0) return MapFail(EINVAL);
  if (len > CopyLimit()) return MapFail(ENODEV);
  FdTable::Ref e = g_table.Acquire(fd);
  if (!e || (e->open_flags & O_PATH) != 0) return MapFail(EBADF);
  if (e->file == nullptr) return MapFail(ENODEV);  // a directory, as the kernel's
  if ((e->open_flags & O_ACCMODE) == O_WRONLY) return MapFail(EACCES);
  const int anonymous = (flags & ~MAP_TYPE) | MAP_PRIVATE | MAP_ANONYMOUS;
  void* map = REAL(mmap)(addr, len, PROT_READ | PROT_WRITE, anonymous, -1, 0);
  if (map == MAP_FAILED) return map;
  int rc = Fill(e->file, static_cast<char*>(map), len, off, page);
  if (rc == 0 && prot != (PROT_READ | PROT_WRITE) && ::mprotect(map, len, prot) != 0) {
    rc = -errno;
  }
  if (rc != 0) {
    ::munmap(map, len);
    return MapFail(-rc);
  }
  return map;
}

}  // namespace

extern "C" {

IORELAY_EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) noexcept {
  if ((flags & MAP_ANONYMOUS) || !IsForwardedFd(fd)) {
    return REAL(mmap)(addr, len, prot, flags, fd, off);
  }
  return MapForwarded(addr, len, prot, flags, fd, off);
}

IORELAY_EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd,
                            off64_t off) noexcept {
  if ((flags & MAP_ANONYMOUS) || !IsForwardedFd(fd)) {
    return REAL(mmap64)(addr, len, prot, flags, fd, off);
  }
  return MapForwarded(addr, len, prot, flags, fd, off);
}

}  // extern "C"
