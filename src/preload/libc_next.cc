// The dlsym(RTLD_NEXT) table and the syscall() stand-ins used before it is filled
// (dlsym and libc start-up may call open/read/fstat/mmap through the interposer).
#include "preload/libc_next.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include "common/raw_close.h"

namespace iorelay::preload {
namespace {

mode_t VaMode(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? va_arg(ap, mode_t) : 0;
}
int SysOpen(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = VaMode(flags, ap);
  va_end(ap);
  return static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, flags, mode));
}
int SysOpenat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = VaMode(flags, ap);
  va_end(ap);
  return static_cast<int>(syscall(SYS_openat, dirfd, path, flags, mode));
}
int SysFcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return static_cast<int>(syscall(SYS_fcntl, fd, cmd, arg));
}
int SysClose(int fd) { return RawClose(fd); }
ssize_t SysRead(int fd, void* b, size_t n) { return syscall(SYS_read, fd, b, n); }
ssize_t SysWrite(int fd, const void* b, size_t n) { return syscall(SYS_write, fd, b, n); }
ssize_t SysPread(int fd, void* b, size_t n, off_t o) { return syscall(SYS_pread64, fd, b, n, o); }
ssize_t SysPwrite(int fd, const void* b, size_t n, off_t o) {
  return syscall(SYS_pwrite64, fd, b, n, o);
}
off_t SysLseek(int fd, off_t o, int w) noexcept { return syscall(SYS_lseek, fd, o, w); }
int SysFstat(int fd, struct stat* st) noexcept {
  return static_cast<int>(syscall(SYS_fstat, fd, st));
}
int SysFstat64(int fd, struct stat64* st) noexcept {
  return static_cast<int>(syscall(SYS_fstat, fd, st));
}
int SysStat(const char* p, struct stat* st) noexcept {
  return static_cast<int>(syscall(SYS_newfstatat, AT_FDCWD, p, st, 0));
}
int SysLstat(const char* p, struct stat* st) noexcept {
  return static_cast<int>(syscall(SYS_newfstatat, AT_FDCWD, p, st, AT_SYMLINK_NOFOLLOW));
}
int SysFstatat(int d, const char* p, struct stat* st, int fl) noexcept {
  return static_cast<int>(syscall(SYS_newfstatat, d, p, st, fl));
}
void* SysMmap(void* a, size_t l, int p, int f, int fd, off_t o) noexcept {
  return reinterpret_cast<void*>(syscall(SYS_mmap, a, l, p, f, fd, o));
}
ssize_t SysReadlink(const char* p, char* b, size_t n) noexcept {
  return syscall(SYS_readlinkat, AT_FDCWD, p, b, n);
}
int SysAccess(const char* p, int m) noexcept {
  return static_cast<int>(syscall(SYS_faccessat, AT_FDCWD, p, m));
}

constexpr LibcNext MakeBootstrap() {
  LibcNext n{};
  n.name_open = &SysOpen;
  n.name_open64 = &SysOpen;
  n.name_openat = &SysOpenat;
  n.name_openat64 = &SysOpenat;
  n.name_fcntl = &SysFcntl;
  n.name_fcntl64 = &SysFcntl;
  n.name_close = &SysClose;
  n.name_read = &SysRead;
  n.name_write = &SysWrite;
  n.name_pread = &SysPread;
  n.name_pread64 = &SysPread;
  n.name_pwrite = &SysPwrite;
  n.name_pwrite64 = &SysPwrite;
  n.name_lseek = &SysLseek;
  n.name_lseek64 = &SysLseek;
  n.name_fstat = &SysFstat;
  n.name_fstat64 = &SysFstat64;
  n.name_stat = &SysStat;
  n.name_lstat = &SysLstat;
  n.name_fstatat = &SysFstatat;
  n.name_mmap = &SysMmap;
  n.name_mmap64 = &SysMmap;
  n.name_readlink = &SysReadlink;
  n.name_access = &SysAccess;
  return n;
}

thread_local bool t_in_dlsym = false;

}  // namespace

constinit LibcNext g_libc_next = MakeBootstrap();

void* ResolveOne(void** slot, const char* name) {
  void* current = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (t_in_dlsym) return current;
  t_in_dlsym = true;
  void* f = dlsym(RTLD_NEXT, name);
  t_in_dlsym = false;
  if (f != nullptr) {
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    return f;
  }
  return current;
}

void ResolveLibcNext() {
#define IORELAY_LIBC_RESOLVE(name) \
  ResolveOne(reinterpret_cast<void**>(&g_libc_next.name_##name), #name);
  IORELAY_LIBC_FUNCTIONS(IORELAY_LIBC_RESOLVE)
#undef IORELAY_LIBC_RESOLVE
}

}  // namespace iorelay::preload
