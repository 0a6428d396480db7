// The real libc functions (dlsym(RTLD_NEXT)), resolved once at load time, so that
// wrappers and the interposer's own code never call back into the interposer.
#pragma once

#include <aio.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "preload/legacy_decls.h"

// X(name): every function the interposer defines and may pass through to libc.
// clang-format off
#define IORELAY_LIBC_FUNCTIONS(X)                                                      \
  X(dlopen) X(open) X(open64) X(openat) X(openat64) X(__open_2) X(__open64_2) X(__openat_2)      \
  X(__openat64_2) X(creat) X(creat64) X(close) X(read) X(write) X(__read_chk)          \
  X(pread) X(pread64) X(__pread_chk) X(__pread64_chk) X(pwrite) X(pwrite64) X(readv)   \
  X(writev) X(preadv) X(preadv64) X(pwritev) X(pwritev64) X(preadv2) X(pwritev2)       \
  X(preadv64v2) X(pwritev64v2) X(lseek) X(lseek64) X(fsync) X(fdatasync)               \
  X(sync_file_range) X(ftruncate) X(ftruncate64) X(truncate) X(truncate64)             \
  X(fallocate) X(fallocate64) X(posix_fallocate) X(posix_fallocate64)                  \
  X(posix_fadvise) X(posix_fadvise64) X(stat) X(stat64) X(lstat) X(lstat64) X(fstat)   \
  X(fstat64) X(fstatat) X(fstatat64) X(statx) X(__xstat) X(__xstat64) X(__lxstat)      \
  X(__lxstat64) X(__fxstat) X(__fxstat64) X(__fxstatat) X(__fxstatat64) X(statfs)      \
  X(statfs64) X(fstatfs) X(fstatfs64) X(statvfs) X(statvfs64) X(fstatvfs)              \
  X(fstatvfs64) X(access) X(faccessat) X(unlink) X(unlinkat) X(mkdir) X(mkdirat) X(chmod) X(fchmodat)       \
  X(rmdir) X(rename) X(renameat) X(renameat2) X(readlink) X(readlinkat) X(remove)      \
  X(realpath) X(__realpath_chk) X(opendir) X(fdopendir) X(readdir) X(readdir64)        \
  X(readdir_r) X(readdir64_r) X(closedir) X(dirfd) X(rewinddir) X(telldir) X(seekdir)  \
  X(fcntl) X(fcntl64) X(dup) X(dup2) X(dup3) X(close_range) X(closefrom) X(mmap)       \
  X(mmap64) X(fork) X(fopen) X(fopen64) X(fdopen) X(freopen) X(freopen64) X(fileno)    \
  X(fileno_unlocked) X(aio_read) X(aio_read64) X(aio_write) X(aio_write64)             \
  X(aio_error) X(aio_error64) X(aio_return) X(aio_return64) X(aio_suspend)             \
  X(aio_suspend64) X(aio_cancel) X(aio_cancel64) X(aio_fsync) X(aio_fsync64)           \
  X(lio_listio) X(lio_listio64) X(execve) X(execv) X(execvp) X(execvpe) X(fexecve)     \
  X(execveat) X(posix_spawn) X(posix_spawnp) X(getxattr) X(lgetxattr) X(fgetxattr)     \
  X(listxattr) X(llistxattr) X(flistxattr) X(setxattr) X(lsetxattr) X(fsetxattr)       \
  X(removexattr) X(lremovexattr) X(fremovexattr) X(flock) X(lockf) X(lockf64)      \
  X(mkstemp) X(mkstemp64) X(mkostemp) X(mkostemp64) X(mkstemps) X(mkostemps) X(mkdtemp)  \
  X(fchmod) X(utimensat) X(futimens) X(utimes) X(lutimes) X(futimes) X(futimesat) X(utime)  \
  X(symlink) X(symlinkat) X(link) X(linkat) X(chdir) X(fchdir) X(getcwd) X(__getcwd_chk)     \
  X(get_current_dir_name) X(chown) X(lchown) X(fchownat) X(fchown)        \
  X(euidaccess) X(eaccess) X(canonicalize_file_name) X(glob) X(glob64) X(scandir)        \
  X(scandir64) X(scandirat) X(mknod) X(mknodat) X(mkfifo) X(mkfifoat) \
  X(nftw) X(nftw64) X(ftw) X(ftw64) X(system) X(popen) X(pclose)
// clang-format on

namespace iorelay::preload {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // readdir_r: still interposed
struct LibcNext {
#define IORELAY_LIBC_MEMBER(name) decltype(&::name) name_##name;
  IORELAY_LIBC_FUNCTIONS(IORELAY_LIBC_MEMBER)
#undef IORELAY_LIBC_MEMBER
};
#pragma GCC diagnostic pop

// Filled by ResolveLibcNext(); until then the members that libc's own start-up may
// need (open, read, close, fstat, mmap...) point at syscall() stand-ins.
extern LibcNext g_libc_next;

// Resolves every member with dlsym(RTLD_NEXT). Idempotent; called from the
// interposer's constructor.
void ResolveLibcNext();

// Resolves one member lazily (for wrappers running before the constructor). Returns
// null if dlsym is itself running on this thread (bootstrap recursion).
void* ResolveOne(void** slot, const char* name);

template <class F>
inline F RealFn(F* slot, const char* name) {
  F f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (f != nullptr) return f;
  return reinterpret_cast<F>(ResolveOne(reinterpret_cast<void**>(slot), name));
}

}  // namespace iorelay::preload

// REAL(read) is the libc function; null only during bootstrap recursion for functions
// with no syscall stand-in (callers then fail with ENOSYS).
#define REAL(name) (::iorelay::preload::RealFn(&::iorelay::preload::g_libc_next.name_##name, #name))
