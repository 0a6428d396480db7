#!/bin/bash
# Completeness check: every file-I/O function that fio and OpenMPI's I/O plugins import
# is either defined by libiorelay_preload.so or listed in REFUSED.md with a reason.
# Usage: coverage_test.sh LIBIORELAY_PRELOAD_SO REFUSED_MD   (exit 77: nothing to check)
set -u
so=$1 refused_md=$2

# What counts as file I/O: libc functions that take a path, a descriptor, a FILE*, a
# DIR*, an aiocb, or create processes that inherit descriptors. Written down on
# purpose; extend it when a new family matters.
file_io_functions="
open open64 openat openat64 __open_2 __open64_2 __openat_2 __openat64_2 creat creat64
close read write __read_chk pread pread64 __pread_chk __pread64_chk pwrite pwrite64 readv
writev preadv preadv64 pwritev pwritev64 preadv2 pwritev2 preadv64v2 pwritev64v2 lseek
lseek64 fsync fdatasync sync_file_range syncfs ftruncate ftruncate64 truncate truncate64
fallocate fallocate64 posix_fallocate posix_fallocate64 posix_fadvise posix_fadvise64
readahead stat stat64 lstat lstat64 fstat fstat64 fstatat fstatat64 statx __xstat
__xstat64 __lxstat __lxstat64 __fxstat __fxstat64 __fxstatat __fxstatat64 statfs
statfs64 fstatfs fstatfs64 statvfs statvfs64 fstatvfs fstatvfs64 access faccessat
euidaccess eaccess unlink unlinkat mkdir mkdirat rmdir rename renameat renameat2
readlink readlinkat remove link linkat symlink symlinkat chmod fchmod fchmodat chown
fchown lchown fchownat utime utimes futimes lutimes utimensat futimens mknod mknodat
mkfifo realpath __realpath_chk canonicalize_file_name chdir fchdir getcwd chroot
opendir fdopendir readdir readdir64 readdir_r readdir64_r closedir dirfd rewinddir
telldir seekdir scandir scandir64 scandirat glob glob64 nftw nftw64 ftw ftw64
fcntl fcntl64 dup dup2 dup3 close_range closefrom flock lockf lockf64 ioctl
mmap mmap64 msync
fork vfork _Fork clone execve execv execvp execvpe execl execlp execle fexecve execveat
posix_spawn posix_spawnp system popen pclose
fopen fopen64 fdopen freopen freopen64 fclose fcloseall fileno fileno_unlocked fread
__fread_chk fwrite fread_unlocked fwrite_unlocked fgets fputs fputc fgetc getc putc
fprintf __fprintf_chk vfprintf __vfprintf_chk fscanf __isoc99_fscanf fseek fseeko
fseeko64 ftell ftello ftello64 rewind fgetpos fsetpos fflush fflush_unlocked feof
ferror clearerr setvbuf setbuf tmpfile tmpfile64 mkstemp mkstemp64 mkostemp mkdtemp
aio_read aio_read64 aio_write aio_write64 aio_error aio_error64 aio_return
aio_return64 aio_suspend aio_suspend64 aio_cancel aio_cancel64 aio_fsync aio_fsync64
lio_listio lio_listio64 io_setup io_destroy io_submit io_getevents io_cancel
io_queue_init io_uring_setup io_uring_enter sendfile sendfile64 splice vmsplice tee
copy_file_range getxattr setxattr fgetxattr fsetxattr listxattr
"

binaries=()
[ -x /usr/bin/fio ] && binaries+=(/usr/bin/fio)
while IFS= read -r f; do binaries+=("$f"); done < <(
  find /usr/lib/x86_64-linux-gnu/openmpi \( -name 'mca_io_*.so' -o -name 'mca_fbtl_*.so' \
       -o -name 'mca_fs_*.so' -o -name 'mca_sharedfp_*.so' \) 2>/dev/null | sort)
if [ ${#binaries[@]} -eq 0 ]; then
  echo "neither fio nor OpenMPI's I/O plugins are installed: nothing to check"
  exit 77
fi

defined=$(nm -D --defined-only "$so" | awk '{print $3}' | sort -u)
# REFUSED.md lists one function per line as "- `name`: reason".
refused=$(sed -n 's/^- `\([A-Za-z0-9_]*\)`.*/\1/p' "$refused_md" | sort -u)
is_in() { grep -qx -- "$1" <<< "$2"; }

missing=0 checked=0
for bin in "${binaries[@]}"; do
  for sym in $(nm -D --undefined-only "$bin" | awk '{print $2}' | sed 's/@.*//' | sort -u); do
    is_in "$sym" "$(tr ' ' '\n' <<< "$file_io_functions")" || continue
    checked=$((checked + 1))
    if is_in "$sym" "$defined"; then continue; fi
    if is_in "$sym" "$refused"; then continue; fi
    echo "NOT COVERED: $sym (imported by $bin): interpose it or add it to REFUSED.md"
    missing=$((missing + 1))
  done
done
# And REFUSED.md must not list what is interposed (the list would be stale).
for sym in $refused; do
  if is_in "$sym" "$defined"; then
    echo "STALE: $sym is interposed but listed in REFUSED.md"
    missing=$((missing + 1))
  fi
done
echo "${#binaries[@]} binaries, $checked file-I/O imports checked, $missing problems"
[ $missing -eq 0 ]
