// Per-descriptor operations other than data transfer: offsets, syncing, sizes and
// space, and advice (mappings: wrappers_mmap.cc).
#include <fcntl.h>

#include "preload/libc_next.h"
#include "preload/state.h"
#include "preload/with_file.h"

using namespace iorelay::preload;

namespace {

int FadviseForwarded(int fd, off64_t len, int advice) {
  if (advice < POSIX_FADV_NORMAL || advice > POSIX_FADV_NOREUSE || len < 0) return EINVAL;
  // Advice has no remote effect (no caching in the relay); it only checks the fd. A directory
  // takes advice as the kernel's file systems do (0).
  return WithFileErrnoResult<0>(fd, [](iorelay_file*) { return 0; });
}

// lseek of a forwarded descriptor. A directory's keeps a position of its own, set by SEEK_SET
// and SEEK_CUR as ext4's and tmpfs's are; SEEK_END, SEEK_DATA and SEEK_HOLE are EINVAL there,
// as on tmpfs (ext4 answers them by its directory format).
off64_t SeekForwarded(int fd, off64_t off, int whence) {
  {
    FdTable::Ref e = g_table.Acquire(fd);
    if (!e) return Fail(EBADF);
    if (e->file == nullptr && (e->open_flags & O_PATH) == 0) {
      if (whence != SEEK_SET && whence != SEEK_CUR) return Fail(EINVAL);
      int64_t at = e->dir_offset.load();
      int64_t to;
      do {
        to = off;
        if (whence == SEEK_CUR && __builtin_add_overflow(at, off, &to)) return Fail(EOVERFLOW);
        if (to < 0) return Fail(EINVAL);
      } while (!e->dir_offset.compare_exchange_weak(at, to));
      return to;
    }
  }
  return WithFile<off64_t>(fd, [&](iorelay_file* f) { return iorelay_lseek(f, off, whence); });
}

// fsync of a forwarded directory's descriptor (which holds only its path): the daemon opens the
// directory and syncs it, so that "rename, then fsync the directory" makes the rename durable
// there as it does locally. Another descriptor without a file (O_PATH) is EBADF, as locally.
int SyncForwarded(int fd, int datasync) {
  {
    FdTable::Ref e = g_table.Acquire(fd);
    if (!e) return Fail(EBADF);
    if (e->file == nullptr && (e->open_flags & O_DIRECTORY) != 0 && (e->open_flags & O_PATH) == 0) {
      iorelay_file* dir = nullptr;
      int rc = iorelay_open(g_client, e->path.c_str(), O_RDONLY | O_DIRECTORY, 0, &dir);
      if (rc == 0) {
        rc = iorelay_fsync(dir, datasync);
        const int closed = iorelay_close(dir);
        if (rc == 0) rc = closed;
      }
      return FromClient(rc);
    }
  }
  return WithFile<int>(fd, [datasync](iorelay_file* f) { return iorelay_fsync(f, datasync); });
}

}  // namespace

extern "C" {

IORELAY_EXPORT off_t lseek(int fd, off_t off, int whence) noexcept {
  if (!IsForwardedFd(fd)) return REAL(lseek)(fd, off, whence);
  return static_cast<off_t>(SeekForwarded(fd, off, whence));
}

IORELAY_EXPORT off64_t lseek64(int fd, off64_t off, int whence) noexcept {
  if (!IsForwardedFd(fd)) return REAL(lseek64)(fd, off, whence);
  return SeekForwarded(fd, off, whence);
}

IORELAY_EXPORT int fsync(int fd) {
  if (!IsForwardedFd(fd)) return REAL(fsync)(fd);
  return SyncForwarded(fd, 0);
}

IORELAY_EXPORT int fdatasync(int fd) {
  if (!IsForwardedFd(fd)) return REAL(fdatasync)(fd);
  return SyncForwarded(fd, 1);
}

// No range sync in the protocol: a request to write out becomes fdatasync of the file.
IORELAY_EXPORT int sync_file_range(int fd, off64_t off, off64_t n, unsigned flags) {
  if (!IsForwardedFd(fd)) return REAL(sync_file_range)(fd, off, n, flags);
  if (off < 0 || n < 0 ||
      (flags &
       ~(SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER)) != 0) {
    return Fail(EINVAL);
  }
  return WithFile<int>(fd, [&](iorelay_file* f) {
    return (flags & SYNC_FILE_RANGE_WRITE) ? iorelay_fsync(f, 1) : 0;
  });
}

IORELAY_EXPORT int ftruncate(int fd, off_t len) noexcept {
  if (!IsForwardedFd(fd)) return REAL(ftruncate)(fd, len);
  return WithFile<int, kDirTruncate>(fd,
                                     [&](iorelay_file* f) { return iorelay_ftruncate(f, len); });
}

IORELAY_EXPORT int ftruncate64(int fd, off64_t len) noexcept {
  if (!IsForwardedFd(fd)) return REAL(ftruncate64)(fd, len);
  return WithFile<int, kDirTruncate>(fd,
                                     [&](iorelay_file* f) { return iorelay_ftruncate(f, len); });
}

IORELAY_EXPORT int fallocate(int fd, int mode, off_t off, off_t len) {
  if (!IsForwardedFd(fd)) return REAL(fallocate)(fd, mode, off, len);
  return WithFile<int, kDirWrite>(
      fd, [&](iorelay_file* f) { return iorelay_fallocate(f, mode, off, len); });
}

IORELAY_EXPORT int fallocate64(int fd, int mode, off64_t off, off64_t len) {
  if (!IsForwardedFd(fd)) return REAL(fallocate64)(fd, mode, off, len);
  return WithFile<int, kDirWrite>(
      fd, [&](iorelay_file* f) { return iorelay_fallocate(f, mode, off, len); });
}

IORELAY_EXPORT int posix_fallocate(int fd, off_t off, off_t len) {
  if (!IsForwardedFd(fd)) return REAL(posix_fallocate)(fd, off, len);
  if (off < 0 || len <= 0) return EINVAL;
  return WithFileErrnoResult<kDirWrite>(
      fd, [&](iorelay_file* f) { return iorelay_fallocate(f, 0, off, len); });
}

IORELAY_EXPORT int posix_fallocate64(int fd, off64_t off, off64_t len) {
  if (!IsForwardedFd(fd)) return REAL(posix_fallocate64)(fd, off, len);
  if (off < 0 || len <= 0) return EINVAL;
  return WithFileErrnoResult<kDirWrite>(
      fd, [&](iorelay_file* f) { return iorelay_fallocate(f, 0, off, len); });
}

IORELAY_EXPORT int posix_fadvise(int fd, off_t off, off_t len, int advice) noexcept {
  if (!IsForwardedFd(fd)) return REAL(posix_fadvise)(fd, off, len, advice);
  return FadviseForwarded(fd, len, advice);
}

IORELAY_EXPORT int posix_fadvise64(int fd, off64_t off, off64_t len, int advice) noexcept {
  if (!IsForwardedFd(fd)) return REAL(posix_fadvise64)(fd, off, len, advice);
  return FadviseForwarded(fd, len, advice);
}

}  // extern "C"
