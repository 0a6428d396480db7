/* Run under LD_PRELOAD=libiorelay_preload.so by preload_e2e_test.cc: exercises forwarded and
 * local files in one program and checks that the bytes landed in the backing dir.
 * Usage: preload_e2e_prog PREFIX BACKING_DIR LOCAL_DIR  (or: exec-child FD, internal). */
#define _GNU_SOURCE
#include <aio.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

static int g_failed = 0;
static int g_step = 0;

#define CHECK(cond)                                                                       \
  do {                                                                                    \
    ++g_step;                                                                             \
    if (!(cond)) {                                                                        \
      fprintf(stderr, "FAIL %s:%d: %s (errno %d %s)\n", __FILE__, __LINE__, #cond, errno, \
              strerror(errno));                                                           \
      g_failed = 1;                                                                       \
    }                                                                                     \
  } while (0)

static char g_fwd[512], g_back[512], g_local[512];

static const char* F(const char* name) { /* forwarded path */
  static char buf[4][1024];
  static int i;
  i = (i + 1) % 4;
  snprintf(buf[i], sizeof buf[i], "%s/%s", g_fwd, name);
  return buf[i];
}
static const char* B(const char* name) { /* the same file in the backing dir */
  static char buf[4][1024];
  static int i;
  i = (i + 1) % 4;
  snprintf(buf[i], sizeof buf[i], "%s/%s", g_back, name);
  return buf[i];
}

/* Reads a whole (local) file into buf; returns its length or -1. */
static ssize_t Slurp(const char* path, char* buf, size_t n) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  ssize_t got = read(fd, buf, n - 1);
  close(fd);
  if (got >= 0) buf[got] = '\0';
  return got;
}

static int LowestFree(void) {
  int fd = fcntl(0, F_DUPFD, 0);
  close(fd);
  return fd;
}

static void TestBasicIo(void) {
  char buf[256];
  int expect = LowestFree();
  int fd = open(F("a.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd == expect);
  CHECK(write(fd, "hello world", 11) == 11);
  CHECK(lseek(fd, 0, SEEK_CUR) == 11);
  CHECK(lseek(fd, 6, SEEK_SET) == 6);
  CHECK(read(fd, buf, 5) == 5 && memcmp(buf, "world", 5) == 0);
  CHECK(pwrite(fd, "HELLO", 5, 0) == 5);
  CHECK(pread(fd, buf, 11, 0) == 11 && memcmp(buf, "HELLO world", 11) == 0);
  struct stat st;
  CHECK(fstat(fd, &st) == 0 && st.st_size == 11 && S_ISREG(st.st_mode));
  CHECK(stat(F("a.dat"), &st) == 0 && st.st_size == 11);
  CHECK(Slurp(B("a.dat"), buf, sizeof buf) == 11 && strcmp(buf, "HELLO world") == 0);
  CHECK(ftruncate(fd, 5) == 0);
  CHECK(fstat(fd, &st) == 0 && st.st_size == 5);
  CHECK(stat(B("a.dat"), &st) == 0 && st.st_size == 5);
  /* I/O that bypasses the interposer hits the O_PATH placeholder. */
  errno = 0;
  CHECK(syscall(SYS_write, fd, "x", 1) == -1 && errno == EBADF);
  /* FD_CLOEXEC mirrored. */
  CHECK(fcntl(fd, F_GETFD) == 0);
  CHECK(fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC);
  CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR);
  CHECK(close(fd) == 0);
  errno = 0;
  CHECK(read(fd, buf, 1) == -1 && errno == EBADF);
  /* A relative path against a forwarded directory descriptor. */
  int dir = open(g_fwd, O_RDONLY | O_DIRECTORY);
  CHECK(dir >= 0);
  fd = openat(dir, "a.dat", O_RDONLY);
  CHECK(fd >= 0 && read(fd, buf, 10) == 5 && memcmp(buf, "HELLO", 5) == 0);
  close(fd);
  close(dir);
}

/* A forwarded directory's descriptor holds a placeholder of a removed directory: the calls the
 * interposer does not wrap find nothing in it and create nothing anywhere. */
static void TestPlaceholderFindsNothing(void) {
  CHECK(mkdir(F("ph"), 0755) == 0);
  int dfd = open(F("ph"), O_RDONLY | O_DIRECTORY);
  CHECK(dfd >= 0);
  char name[64];
  snprintf(name, sizeof name, "iorelay-e2e-probe-%d", (int)getpid());
  CHECK(syscall(SYS_mknodat, dfd, name, S_IFREG | 0600, 0) == -1 && errno == ENOENT);
  CHECK(syscall(SYS_symlinkat, "target", dfd, name) == -1 && errno == ENOENT);
  char root_path[96];
  snprintf(root_path, sizeof root_path, "/%s", name);
  CHECK(access(root_path, F_OK) == -1);
  CHECK(close(dfd) == 0 && rmdir(F("ph")) == 0);
}

/* Modes, times and links reach the file in the backing dir, by path and by descriptor. */
static void TestModesTimesAndLinks(void) {
  struct stat st;
  int fd = open(F("tm.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && write(fd, "abc", 3) == 3);
  const struct timespec ts[2] = {{1000000000, 5}, {1200000000, 7}};
  CHECK(futimens(fd, ts) == 0);
  CHECK(stat(B("tm.dat"), &st) == 0 && st.st_atim.tv_sec == 1000000000 &&
        st.st_mtim.tv_sec == 1200000000 && st.st_mtim.tv_nsec == 7);
  CHECK(fstat(fd, &st) == 0 && st.st_mtim.tv_sec == 1200000000);
  CHECK(fchmod(fd, 0600) == 0 && stat(B("tm.dat"), &st) == 0 && (st.st_mode & 0777) == 0600);
  /* Ownership is not forwarded: asking for the owner and group a file has succeeds. */
  CHECK(fchown(fd, st.st_uid, st.st_gid) == 0 && chown(F("tm.dat"), (uid_t)-1, st.st_gid) == 0);
  CHECK(chown(F("tm.dat"), st.st_uid + 1, (gid_t)-1) == -1 && errno == EPERM);
  CHECK(fchownat(AT_FDCWD, F("missing"), 0, 0, 0) == -1 && errno == ENOENT);
  const struct timeval tv[2] = {{1300000000, 1}, {1400000000, 2}};
  CHECK(utimes(F("tm.dat"), tv) == 0 && stat(B("tm.dat"), &st) == 0 &&
        st.st_mtim.tv_sec == 1400000000 && st.st_mtim.tv_nsec == 2000);
  const struct utimbuf ub = {1500000000, 1600000000};
  CHECK(utime(F("tm.dat"), &ub) == 0 && stat(B("tm.dat"), &st) == 0 && st.st_mtime == 1600000000);
  const struct timespec omit_atime[2] = {{0, UTIME_OMIT}, {1700000000, 0}};
  CHECK(utimensat(AT_FDCWD, F("tm.dat"), omit_atime, 0) == 0 && stat(B("tm.dat"), &st) == 0 &&
        st.st_atime == 1500000000 && st.st_mtime == 1700000000);
  CHECK(utimensat(AT_FDCWD, F("tm.dat"), NULL, 0) == 0 && stat(B("tm.dat"), &st) == 0 &&
        st.st_mtime > 1700000000);
  const struct timespec bad[2] = {{0, 1000000000}, {0, 0}};
  CHECK(utimensat(AT_FDCWD, F("tm.dat"), bad, 0) == -1 && errno == EINVAL);
  CHECK(utimensat(AT_FDCWD, F("missing"), NULL, 0) == -1 && errno == ENOENT);

  CHECK(symlink("tm.dat", F("tm.lnk")) == 0);
  char buf[64];
  CHECK(readlink(B("tm.lnk"), buf, sizeof buf) == 6 && memcmp(buf, "tm.dat", 6) == 0);
  CHECK(symlink("other", F("tm.lnk")) == -1 && errno == EEXIST);
  CHECK(symlink("tm.dat", F("tm.slash/")) == -1 && errno == ENOENT);
  /* Past the wire's bound: ENAMETOOLONG, and the connection (with fd's file) stays up. */
  static char longname[5000];
  memset(longname, 'x', sizeof longname - 1);
  CHECK(symlink(longname, F("tm.long")) == -1 && errno == ENAMETOOLONG);
  CHECK(pwrite(fd, "d", 1, 3) == 1);
  const struct timeval old[2] = {{1100000000, 0}, {1100000000, 0}};
  CHECK(lutimes(F("tm.lnk"), old) == 0 && lstat(B("tm.lnk"), &st) == 0 &&
        st.st_mtime == 1100000000);
  CHECK(lchown(F("tm.lnk"), st.st_uid, st.st_gid) == 0);
  CHECK(stat(B("tm.dat"), &st) == 0 && st.st_mtime != 1100000000); /* the target kept its own */

  CHECK(link(F("tm.dat"), F("tm.hard")) == 0 && stat(B("tm.hard"), &st) == 0 && st.st_nlink == 2);
  CHECK(fstat(fd, &st) == 0 && st.st_nlink == 2);
  CHECK(linkat(AT_FDCWD, F("tm.lnk"), AT_FDCWD, F("tm.hard2"), AT_SYMLINK_FOLLOW) == 0 &&
        lstat(B("tm.hard2"), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 3);
  CHECK(linkat(AT_FDCWD, F("tm.lnk"), AT_FDCWD, F("tm.lnk2"), 0) == 0 &&
        lstat(B("tm.lnk2"), &st) == 0 && S_ISLNK(st.st_mode));
  char local[600];
  snprintf(local, sizeof local, "%s/tm.local", g_local);
  CHECK(link(F("tm.dat"), local) == -1 && errno == EXDEV);
  CHECK(close(fd) == 0);

  /* By a directory's descriptor: *at() bases, fchmod and futimens of the directory. */
  CHECK(mkdir(F("tmd"), 0755) == 0);
  int dfd = open(F("tmd"), O_RDONLY | O_DIRECTORY);
  CHECK(dfd >= 0 && symlinkat("../tm.dat", dfd, "up") == 0);
  CHECK(lstat(B("tmd/up"), &st) == 0 && S_ISLNK(st.st_mode));
  CHECK(fchmod(dfd, 0700) == 0 && stat(B("tmd"), &st) == 0 && (st.st_mode & 0777) == 0700);
  CHECK(futimens(dfd, ts) == 0 && stat(B("tmd"), &st) == 0 && st.st_mtime == 1200000000);
  CHECK(utimensat(dfd, "up", ts, AT_SYMLINK_NOFOLLOW) == 0 && lstat(B("tmd/up"), &st) == 0 &&
        st.st_mtime == 1200000000);
  /* Data calls on it fail as the kernel's do (a directory is never open for writing). */
  char byte = 'x';
  struct iovec one = {&byte, 1};
  CHECK(write(dfd, &byte, 1) == -1 && errno == EBADF);
  CHECK(pwrite(dfd, &byte, 1, 0) == -1 && errno == EBADF);
  CHECK(writev(dfd, &one, 1) == -1 && errno == EBADF);
  CHECK(pwritev2(dfd, &one, 1, -1, 0) == -1 && errno == EBADF);
  CHECK(ftruncate(dfd, 0) == -1 && errno == EINVAL);
  CHECK(fallocate(dfd, 0, 0, 1) == -1 && errno == EBADF);
  CHECK(posix_fallocate(dfd, 0, 1) == EBADF);
  CHECK(pread(dfd, &byte, 1, 0) == -1 && errno == EISDIR);
  /* Its position moves as ext4's and tmpfs's do; advice is taken. */
  CHECK(lseek(dfd, 0, SEEK_SET) == 0 && lseek(dfd, 5, SEEK_SET) == 5 &&
        lseek(dfd, 0, SEEK_CUR) == 5);
  CHECK(lseek(dfd, -1, SEEK_SET) == -1 && errno == EINVAL);
  int dup_dfd = dup(dfd);
  CHECK(dup_dfd >= 0 && lseek(dup_dfd, 0, SEEK_CUR) == 5 && close(dup_dfd) == 0);
  CHECK(posix_fadvise(dfd, 0, 0, POSIX_FADV_WILLNEED) == 0);
  CHECK(posix_fadvise(dfd, 0, -1, POSIX_FADV_WILLNEED) == EINVAL);
  CHECK(close(dfd) == 0);
  const char* names[] = {"tm.dat", "tm.lnk", "tm.hard", "tm.hard2", "tm.lnk2", "tmd/up"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) CHECK(unlink(F(names[i])) == 0);
  CHECK(rmdir(F("tmd")) == 0);
}

/* A trailing slash (or a last "." component) asks for a directory, as the kernel's walk does:
 * a file named so is ENOTDIR, and unlink of it keeps the file. */
static void TestTrailingSlashNamesADirectory(void) {
  int fd = open(F("ts.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && close(fd) == 0);
  struct stat st;
  CHECK(unlink(F("ts.dat/")) == -1 && errno == ENOTDIR);
  CHECK(access(B("ts.dat"), F_OK) == 0);
  CHECK(stat(F("ts.dat/"), &st) == -1 && errno == ENOTDIR);
  CHECK(lstat(F("ts.dat/."), &st) == -1 && errno == ENOTDIR);
  CHECK(open(F("ts.dat/"), O_RDONLY) == -1 && errno == ENOTDIR);
  CHECK(rename(F("ts.dat/"), F("ts2.dat")) == -1 && errno == ENOTDIR);
  CHECK(mkdir(F("tsd/"), 0755) == 0 && stat(F("tsd/"), &st) == 0 && S_ISDIR(st.st_mode));
  CHECK(rmdir(F("tsd/")) == 0 && access(B("tsd"), F_OK) != 0);
  CHECK(unlink(F("ts.dat")) == 0);
}

/* ".." is resolved where the kernel resolves it: after a symbolic link to a directory, in its
 * target's parent; after a missing name, nowhere. The working directory stays a lexical path. */
static void TestDotDotAfterASymlink(void) {
  CHECK(mkdir(B("dd"), 0755) == 0 && mkdir(B("dd/a"), 0755) == 0 && mkdir(B("dd/a/b"), 0755) == 0);
  CHECK(symlink("a/b", B("dd/lnk")) == 0);
  int fd = open(B("dd/a/file"), O_WRONLY | O_CREAT, 0644);
  CHECK(fd >= 0 && write(fd, "in a", 4) == 4 && close(fd) == 0);
  char buf[16] = {0};
  fd = open(F("dd/lnk/../file"), O_RDONLY);
  CHECK(fd >= 0 && read(fd, buf, sizeof buf) == 4 && strcmp(buf, "in a") == 0 && close(fd) == 0);
  struct stat st;
  CHECK(stat(F("dd/missing/../a/file"), &st) == -1 && errno == ENOENT);
  CHECK(stat(F("dd/a/file/../file"), &st) == -1 && errno == ENOTDIR);
  CHECK(stat(F("dd/a/../lnk"), &st) == 0 && S_ISDIR(st.st_mode));
  DIR* d = opendir(F("dd/lnk/.."));
  int saw_b = 0, saw_lnk = 0;
  for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) {
    saw_b |= strcmp(e->d_name, "b") == 0;
    saw_lnk |= strcmp(e->d_name, "lnk") == 0;
  }
  CHECK(d != NULL && saw_b && !saw_lnk && closedir(d) == 0);
  /* realpath replaces each symbolic link by its target. */
  char real[1024];
  CHECK(realpath(F("dd/lnk"), real) != NULL && strcmp(real, F("dd/a/b")) == 0);
  CHECK(realpath(F("dd/lnk/../file"), real) != NULL && strcmp(real, F("dd/a/file")) == 0);
  CHECK(realpath(F("dd/missing/.."), real) == NULL && errno == ENOENT);
  /* Relative to a directory's descriptor and to the working directory. */
  int dfd = open(F("dd/lnk"), O_RDONLY | O_DIRECTORY);
  CHECK(dfd >= 0 && fstatat(dfd, "../file", &st, 0) == 0 && st.st_size == 4 && close(dfd) == 0);
  char before[1024], now[1024];
  CHECK(getcwd(before, sizeof before) != NULL && chdir(F("dd/lnk")) == 0);
  CHECK(stat("../file", &st) == 0 && st.st_size == 4);
  CHECK(getcwd(now, sizeof now) != NULL && strcmp(now, F("dd/lnk")) == 0);
  /* With "..", the working directory is where the kernel's would be: the link target's parent. */
  CHECK(chdir(F("dd/lnk/..")) == 0 && getcwd(now, sizeof now) != NULL &&
        strcmp(now, F("dd/a")) == 0);
  CHECK(stat("file", &st) == 0 && st.st_size == 4);
  CHECK(chdir(before) == 0);
  /* Above the forwarded prefix, the lexical form still decides. */
  char above[1200];
  snprintf(above, sizeof above, "%s/dd/../../%s", g_fwd, strrchr(g_fwd, '/') + 1);
  CHECK(stat(above, &st) == 0 && S_ISDIR(st.st_mode));
  CHECK(unlink(B("dd/lnk")) == 0 && unlink(B("dd/a/file")) == 0 && rmdir(B("dd/a/b")) == 0);
  CHECK(rmdir(B("dd/a")) == 0 && rmdir(B("dd")) == 0);
}

/* fdopen(fd, "a") appends as glibc's does (O_APPEND set, the stream at the end); fdopen refuses a
 * mode the descriptor's access does not allow; fopen(.., "a") starts at the end. */
static void TestFdopenAppends(void) {
  int fd = open(F("fa.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && write(fd, "abcdef", 6) == 6 && lseek(fd, 0, SEEK_SET) == 0);
  FILE* f = fdopen(fd, "a");
  CHECK(f != NULL && (fcntl(fd, F_GETFL) & O_APPEND) != 0 && ftell(f) == 6);
  CHECK(f != NULL && fputs("X", f) >= 0 && fclose(f) == 0);
  char buf[16];
  CHECK(Slurp(B("fa.dat"), buf, sizeof buf) == 7 && strcmp(buf, "abcdefX") == 0);
  int ro = open(F("fa.dat"), O_RDONLY);
  CHECK(ro >= 0 && fdopen(ro, "w") == NULL && errno == EINVAL);
  CHECK(close(ro) == 0);
  f = fopen(F("fa.dat"), "a");
  CHECK(f != NULL && ftell(f) == 7 && fclose(f) == 0);
  CHECK(unlink(F("fa.dat")) == 0);
}

/* Forwarded creates take the application's umask, whatever the daemon's. */
static void TestUmaskApplies(void) {
  mode_t old = umask(077);
  struct stat st;
  int fd = open(F("um.dat"), O_RDWR | O_CREAT | O_TRUNC, 0666);
  CHECK(fd >= 0 && close(fd) == 0);
  CHECK(stat(B("um.dat"), &st) == 0 && (st.st_mode & 0777) == 0600);
  CHECK(mkdir(F("umd"), 0777) == 0 && stat(B("umd"), &st) == 0 && (st.st_mode & 0777) == 0700);
  umask(0);
  fd = open(F("um0.dat"), O_RDWR | O_CREAT | O_TRUNC, 0666);
  CHECK(fd >= 0 && close(fd) == 0);
  CHECK(stat(B("um0.dat"), &st) == 0 && (st.st_mode & 0777) == 0666);
  umask(old);
  CHECK(unlink(F("um.dat")) == 0 && unlink(F("um0.dat")) == 0 && rmdir(F("umd")) == 0);
}

/* fsync of a directory's descriptor syncs the directory (the durable-rename pattern); O_TMPFILE
 * makes an unnamed file in the directory. */
static void TestDirectorySyncAndTmpfile(void) {
  CHECK(mkdir(F("sy"), 0755) == 0);
  int dfd = open(F("sy"), O_RDONLY | O_DIRECTORY);
  CHECK(dfd >= 0 && fsync(dfd) == 0 && fdatasync(dfd) == 0 && close(dfd) == 0);
  int t = open(F("sy"), O_TMPFILE | O_RDWR, 0600);
  struct stat st;
  CHECK(t >= 0 && write(t, "tmp", 3) == 3 && fstat(t, &st) == 0 && S_ISREG(st.st_mode));
  CHECK(t >= 0 && close(t) == 0);
  CHECK(rmdir(F("sy")) == 0);
}

/* rewinddir shows the directory as it is now. */
static void TestRewinddirRefreshes(void) {
  CHECK(mkdir(F("rw"), 0755) == 0);
  int fd = open(F("rw/a"), O_WRONLY | O_CREAT, 0644);
  CHECK(fd >= 0 && close(fd) == 0);
  DIR* d = opendir(F("rw"));
  CHECK(d != NULL);
  if (d == NULL) return;
  fd = open(F("rw/b"), O_WRONLY | O_CREAT, 0644);
  CHECK(fd >= 0 && close(fd) == 0 && unlink(F("rw/a")) == 0);
  rewinddir(d);
  int sees_a = 0, sees_b = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    sees_a |= strcmp(e->d_name, "a") == 0;
    sees_b |= strcmp(e->d_name, "b") == 0;
  }
  CHECK(!sees_a && sees_b);
  CHECK(closedir(d) == 0 && unlink(F("rw/b")) == 0 && rmdir(F("rw")) == 0);
}

/* fstat answered from the open's attributes sees what this process changed since: a write
 * through another descriptor, truncate and chmod by path. */
static void TestFstatSeesThisProcessesChanges(void) {
  int a = open(F("fc.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  int b = open(F("fc.dat"), O_RDWR);
  struct stat st;
  CHECK(a >= 0 && b >= 0 && fstat(a, &st) == 0 && st.st_size == 0);
  CHECK(pwrite(b, "0123456789", 10, 0) == 10 && fstat(a, &st) == 0 && st.st_size == 10);
  int c = open(F("fc.dat"), O_RDONLY);
  CHECK(c >= 0 && truncate(F("fc.dat"), 4) == 0 && fstat(c, &st) == 0 && st.st_size == 4);
  int d = open(F("fc.dat"), O_RDONLY);
  CHECK(d >= 0 && chmod(F("fc.dat"), 0600) == 0 && fstat(d, &st) == 0 &&
        (st.st_mode & 0777) == 0600);
  CHECK(close(a) == 0 && close(b) == 0 && close(c) == 0 && close(d) == 0);
  CHECK(unlink(F("fc.dat")) == 0);
}

/* flock and lockf are whole-file and ranged record locks (as Linux's NFS client emulates flock):
 * another process sees them. */
static void TestFlockAndLockf(void) {
  int fd = open(F("flock.dat"), O_RDWR | O_CREAT, 0644);
  CHECK(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    int other = open(F("flock.dat"), O_RDWR);
    int busy = flock(other, LOCK_SH | LOCK_NB) == -1 && errno == EWOULDBLOCK;
    _exit(busy ? 0 : 1);
  }
  int status = -1;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0);
  CHECK(flock(fd, LOCK_UN) == 0 && lockf(fd, F_TLOCK, 10) == 0);
  pid = fork();
  if (pid == 0) {
    int other = open(F("flock.dat"), O_RDWR);
    int busy = lockf(other, F_TEST, 5) == -1 && errno == EACCES;
    int free_after = lseek(other, 20, SEEK_SET) == 20 && lockf(other, F_TLOCK, 5) == 0;
    _exit(busy && free_after ? 0 : 1);
  }
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0);
  CHECK(lockf(fd, F_ULOCK, 10) == 0 && flock(fd, 99) == -1 && errno == EINVAL);
  CHECK(close(fd) == 0 && unlink(F("flock.dat")) == 0);
}

/* mkstemp, mkostemps and mkdtemp make their names in a forwarded directory. */
static void TestTempNames(void) {
  char t[1024];
  snprintf(t, sizeof t, "%s", F("tmp-XXXXXX"));
  int fd = mkstemp(t);
  struct stat st;
  CHECK(fd >= 0 && strstr(t, "XXXXXX") == NULL && write(fd, "t", 1) == 1);
  CHECK(fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0600 && close(fd) == 0);
  CHECK(unlink(t) == 0);
  snprintf(t, sizeof t, "%s", F("tmp-XXXXXX.h5"));
  fd = mkostemps(t, 3, O_CLOEXEC);
  CHECK(fd >= 0 && strcmp(t + strlen(t) - 3, ".h5") == 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC);
  CHECK(close(fd) == 0 && unlink(t) == 0);
  snprintf(t, sizeof t, "%s", F("dir-XXXXXX"));
  CHECK(mkdtemp(t) == t && stat(t, &st) == 0 && S_ISDIR(st.st_mode) && rmdir(t) == 0);
  snprintf(t, sizeof t, "%s", F("bad-XXXX"));
  CHECK(mkstemp(t) == -1 && errno == EINVAL);
}

static void TestLocalStillWorks(void) {
  char path[1024], buf[64];
  snprintf(path, sizeof path, "%s/local.txt", g_local);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK(write(fd, "local", 5) == 5);
  CHECK(pread(fd, buf, 5, 0) == 5 && memcmp(buf, "local", 5) == 0);
  CHECK(syscall(SYS_pread64, fd, buf, 5, 0) == 5); /* a real descriptor */
  close(fd);
  CHECK(unlink(path) == 0);
}

/* nftw and ftw callbacks: counts by type, and the last type seen. */
static int g_walk_files, g_walk_dirs, g_walk_last;
static int CountEntry(const char* path, const struct stat* st, int type, struct FTW* ftw) {
  (void)ftw;
  if (type == FTW_F && S_ISREG(st->st_mode) && strstr(path, "/d/f") != NULL) ++g_walk_files;
  if (type == FTW_D || type == FTW_DP) ++g_walk_dirs;
  g_walk_last = type;
  return 0;
}
static int CountFtw(const char* path, const struct stat* st, int type) {
  return CountEntry(path, st, type, NULL);
}
/* FTW_CHDIR: each file is visited from its own directory. */
static int g_walk_wrong_cwd;
static int InItsDirectory(const char* path, const struct stat* st, int type, struct FTW* ftw) {
  (void)st;
  char cwd[1024];
  if (type == FTW_F && (getcwd(cwd, sizeof cwd) == NULL || strlen(cwd) != (size_t)ftw->base - 1 ||
                        strncmp(cwd, path, strlen(cwd)) != 0)) {
    ++g_walk_wrong_cwd;
  }
  return 0;
}
static int StopAtFirstFile(const char* path, const struct stat* st, int type, struct FTW* ftw) {
  (void)path, (void)st, (void)ftw;
  return type == FTW_F ? FTW_STOP : FTW_CONTINUE;
}

static void TestNamespace(void) {
  char buf[64];
  CHECK(mkdir(F("d"), 0755) == 0);
  struct stat st;
  CHECK(stat(B("d"), &st) == 0 && S_ISDIR(st.st_mode));
  CHECK(euidaccess(F("d"), W_OK) == 0 && eaccess(F("d/none"), F_OK) == -1 && errno == ENOENT);
  char* canonical = canonicalize_file_name(F("d/../d"));
  CHECK(canonical != NULL && strcmp(canonical, F("d")) == 0);
  free(canonical);
  for (int i = 0; i < 3; ++i) {
    char name[32];
    snprintf(name, sizeof name, "d/f%d", i);
    int fd = open(F(name), O_WRONLY | O_CREAT, 0644);
    CHECK(fd >= 0);
    close(fd);
  }
  DIR* d = opendir(F("d"));
  CHECK(d != NULL);
  int files = 0, dots = 0;
  struct dirent* e;
  while (d != NULL && (e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, "f", 1) == 0) ++files;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) ++dots;
  }
  CHECK(files == 3);
  /* The listing's attributes answer stat, but not once this process changed a file. */
  CHECK(stat(F("d/f1"), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0);
  CHECK(truncate(F("d/f1"), 100) == 0 && stat(F("d/f1"), &st) == 0 && st.st_size == 100);
  CHECK(truncate(F("d/f1"), 0) == 0);
  CHECK(dirfd(d) >= 0);
  if (d != NULL) rewinddir(d);
  CHECK(d != NULL && readdir(d) != NULL);
  CHECK(d != NULL && closedir(d) == 0);
  /* glob, scandir, nftw and ftw walk with glibc's internal calls unless the interposer steps
   * in. */
  g_walk_files = g_walk_dirs = 0;
  CHECK(nftw(F("d"), CountEntry, 4, FTW_PHYS) == 0 && g_walk_files == 3 && g_walk_dirs == 1);
  CHECK(nftw(F("d"), CountEntry, 4, FTW_PHYS | FTW_DEPTH) == 0 && g_walk_last == FTW_DP);
  g_walk_files = g_walk_dirs = 0;
  CHECK(ftw(F("d"), CountFtw, 4) == 0 && g_walk_files == 3 && g_walk_dirs == 1);
  CHECK(nftw(F("d"), StopAtFirstFile, 4, FTW_ACTIONRETVAL) == FTW_STOP);
  char walk_from[1024];
  CHECK(getcwd(walk_from, sizeof walk_from) != NULL && mkdir(F("d/sub"), 0755) == 0);
  int sub_fd = open(F("d/sub/s0"), O_WRONLY | O_CREAT, 0644);
  CHECK(sub_fd >= 0 && close(sub_fd) == 0);
  g_walk_wrong_cwd = 0;
  CHECK(nftw(F("d"), InItsDirectory, 4, FTW_CHDIR | FTW_DEPTH) == 0 && g_walk_wrong_cwd == 0);
  char walk_back[1024];
  CHECK(getcwd(walk_back, sizeof walk_back) != NULL && strcmp(walk_back, walk_from) == 0);
  CHECK(unlink(F("d/sub/s0")) == 0 && rmdir(F("d/sub")) == 0);
  CHECK(nftw(F("none"), CountEntry, 4, 0) == -1 && errno == ENOENT);
  glob_t g;
  CHECK(glob(F("d/f[12]"), 0, NULL, &g) == 0 && g.gl_pathc == 2 &&
        strcmp(g.gl_pathv[1], F("d/f2")) == 0);
  globfree(&g);
  CHECK(glob(F("d/none*"), 0, NULL, &g) == GLOB_NOMATCH);
  struct dirent** names = NULL;
  int n = scandir(F("d"), &names, NULL, alphasort);
  CHECK(n == 5 && strcmp(names[0]->d_name, ".") == 0 && strcmp(names[4]->d_name, "f2") == 0);
  for (int i = 0; i < n; ++i) free(names[i]);
  free(names);
  CHECK(scandir(F("none"), &names, NULL, alphasort) == -1 && errno == ENOENT);
  CHECK(rename(F("d/f0"), F("d/g0")) == 0);
  CHECK(access(B("d/g0"), F_OK) == 0 && access(B("d/f0"), F_OK) != 0);
  CHECK(access(F("d/g0"), F_OK) == 0);
  CHECK(unlink(F("d/g0")) == 0 && access(B("d/g0"), F_OK) != 0);
  errno = 0;
  CHECK(stat(F("d/g0"), &st) == -1 && errno == ENOENT);
  CHECK(unlink(F("d/f1")) == 0 && unlink(F("d/f2")) == 0 && rmdir(F("d")) == 0);
  CHECK(access(B("d"), F_OK) != 0);
  errno = 0;
  CHECK(rename(F("a.dat"), "/tmp/never-here") == -1 && errno == EXDEV);
  (void)buf;
}

static void TestDupAndFork(void) {
  int fd = open(F("dup.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  int fd2 = dup(fd);
  CHECK(fd2 > fd);
  CHECK(write(fd, "12345", 5) == 5);
  CHECK(lseek(fd2, 0, SEEK_CUR) == 5);
  CHECK(dup2(fd, 50) == 50);
  CHECK(write(50, "678", 3) == 3);
  CHECK(lseek(fd, 0, SEEK_CUR) == 8);
  CHECK(fcntl(50, F_GETFD) == 0);
  int fd3 = fcntl(fd, F_DUPFD_CLOEXEC, 60);
  CHECK(fd3 >= 60 && fcntl(fd3, F_GETFD) == FD_CLOEXEC);
  close(fd3);
  close(50);
  close(fd2);
  CHECK(lseek(fd, 0, SEEK_CUR) == 8); /* still open through fd */
  pid_t pid = fork();
  if (pid == 0) {
    _exit(write(fd, "child", 5) == 5 ? 0 : 1);
  }
  int status = -1;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0);
  CHECK(lseek(fd, 0, SEEK_CUR) == 13);
  close(fd);
  char buf[64];
  CHECK(Slurp(B("dup.dat"), buf, sizeof buf) == 13 && strcmp(buf, "12345678child") == 0);
}

static void TestStdio(void) {
  FILE* f = fopen(F("stdio.txt"), "w");
  CHECK(f != NULL);
  if (f == NULL) return;
  CHECK(fileno(f) >= 0);
  fprintf(f, "line %d\n", 42);
  CHECK(fclose(f) == 0);
  char buf[64];
  CHECK(Slurp(B("stdio.txt"), buf, sizeof buf) == 8 && strcmp(buf, "line 42\n") == 0);
  f = fopen(F("stdio.txt"), "r");
  CHECK(f != NULL);
  if (f == NULL) return;
  memset(buf, 0, sizeof buf);
  CHECK(fread(buf, 1, sizeof buf, f) == 8 && strcmp(buf, "line 42\n") == 0);
  CHECK(fseek(f, 5, SEEK_SET) == 0 && ftell(f) == 5 && fgetc(f) == '4');
  fclose(f);
}

/* Two threads asking aio_error about one aiocb in flight: its result is taken once. */
enum { kPollRounds = 2000 };
static struct aiocb g_polled[kPollRounds];
static atomic_int g_poll_round;
static void* PollAioError(void* arg) {
  (void)arg;
  for (int seen = 0; seen < kPollRounds; ++seen) {
    while (atomic_load(&g_poll_round) <= seen) {
    }
    while (aio_error(&g_polled[seen]) == EINPROGRESS) {
    }
  }
  return NULL;
}
static void TestAioErrorFromTwoThreads(void) {
  int fd = open(F("aio2.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  static char data[4096];
  pthread_t other;
  CHECK(pthread_create(&other, NULL, PollAioError, NULL) == 0);
  for (int r = 0; r < kPollRounds; ++r) {
    struct aiocb* cb = &g_polled[r];
    cb->aio_fildes = fd;
    cb->aio_buf = data;
    cb->aio_nbytes = sizeof data;
    cb->aio_offset = (off_t)r * (off_t)sizeof data;
    cb->aio_sigevent.sigev_notify = SIGEV_NONE;
    CHECK(aio_write(cb) == 0);
    atomic_fetch_add(&g_poll_round, 1);
    while (aio_error(cb) == EINPROGRESS) {
    }
  }
  CHECK(pthread_join(other, NULL) == 0);
  for (int r = 0; r < kPollRounds; ++r) CHECK(aio_return(&g_polled[r]) == (ssize_t)sizeof data);
  CHECK(close(fd) == 0 && unlink(F("aio2.dat")) == 0);
}

static void TestAio(void) {
  int fd = open(F("aio.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  static char data[] = "asynchronous";
  struct aiocb cb;
  memset(&cb, 0, sizeof cb);
  cb.aio_fildes = fd;
  cb.aio_buf = data;
  cb.aio_nbytes = 12;
  cb.aio_offset = 4;
  cb.aio_sigevent.sigev_notify = SIGEV_NONE;
  CHECK(aio_write(&cb) == 0);
  const struct aiocb* list[1] = {&cb};
  CHECK(aio_suspend(list, 1, NULL) == 0);
  CHECK(aio_error(&cb) == 0);
  CHECK(aio_return(&cb) == 12);
  char back[64];
  struct aiocb rd;
  memset(&rd, 0, sizeof rd);
  rd.aio_fildes = fd;
  rd.aio_buf = back;
  rd.aio_nbytes = 12;
  rd.aio_offset = 4;
  CHECK(aio_read(&rd) == 0 && aio_error(&rd) == 0 && aio_return(&rd) == 12);
  CHECK(memcmp(back, "asynchronous", 12) == 0);
  CHECK(aio_fsync(O_SYNC, &rd) == 0 && aio_error(&rd) == 0 && aio_return(&rd) == 0);
  /* lio_listio: two writes extend the file to 24 bytes. */
  static char more[] = "ABCDEFGH";
  struct aiocb w1, w2;
  memset(&w1, 0, sizeof w1);
  memset(&w2, 0, sizeof w2);
  w1.aio_fildes = w2.aio_fildes = fd;
  w1.aio_lio_opcode = w2.aio_lio_opcode = LIO_WRITE;
  w1.aio_buf = more;
  w1.aio_nbytes = 4;
  w1.aio_offset = 16;
  w2.aio_buf = more + 4;
  w2.aio_nbytes = 4;
  w2.aio_offset = 20;
  struct aiocb* lio[3] = {&w1, NULL, &w2};
  CHECK(lio_listio(LIO_WAIT, lio, 3, NULL) == 0);
  CHECK(aio_return(&w1) == 4 && aio_return(&w2) == 4);
  close(fd);
  struct stat st;
  CHECK(stat(B("aio.dat"), &st) == 0 && st.st_size == 24);
  char buf[32];
  CHECK(Slurp(B("aio.dat"), buf, sizeof buf) == 24 && memcmp(buf + 16, "ABCDEFGH", 8) == 0);
}

static void TestLocks(void) {
  int fd = open(F("lock.dat"), O_RDWR | O_CREAT, 0644);
  CHECK(fd >= 0);
  struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
  CHECK(fcntl(fd, F_SETLK, &lk) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    struct flock c = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 5, .l_len = 1};
    int busy = fcntl(fd, F_SETLK, &c) == -1 && (errno == EAGAIN || errno == EACCES);
    struct flock g = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    int seen = fcntl(fd, F_GETLK, &g) == 0 && g.l_type == F_WRLCK;
    _exit(busy && seen ? 0 : 1);
  }
  int status = -1;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0);
  lk.l_type = F_UNLCK;
  CHECK(fcntl(fd, F_SETLK, &lk) == 0);
  struct flock ofd = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
  errno = 0;
  CHECK(fcntl(fd, F_OFD_SETLK, &ofd) == -1 && errno == EINVAL);
  close(fd);
}

static void TestExec(const char* self) {
  int fd = open(F("exec.log"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK(write(fd, "A", 1) == 1);
  CHECK(dup2(fd, 9) == 9);
  close(fd);
  pid_t pid = fork();
  if (pid == 0) {
    execl(self, self, "exec-child", "9", (char*)NULL);
    _exit(127);
  }
  int status = -1;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0);
  /* After exec the offset is no longer shared (docs/interposer.md, "exec"). */
  CHECK(lseek(9, 0, SEEK_CUR) == 1);
  close(9);
  char buf[16];
  CHECK(Slurp(B("exec.log"), buf, sizeof buf) == 2 && strcmp(buf, "AB") == 0);
}

/* The working directory inside a forwarded directory: relative paths, getcwd, fork and exec
 * keep it; calls the interposer does not wrap find nothing; chdir out gives the kernel's back. */
static int SameCwd(const char* want) {
  char buf[1024];
  return getcwd(buf, sizeof buf) != NULL && strcmp(buf, want) == 0;
}

static void TestWorkingDirectory(void) {
  char before[1024];
  CHECK(getcwd(before, sizeof before) != NULL);
  CHECK(mkdir(F("wd"), 0755) == 0 && mkdir(F("wd/sub"), 0755) == 0);
  CHECK(chdir(F("wd")) == 0 && SameCwd(F("wd")));
  int fd = open("rel.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && write(fd, "cwd", 3) == 3 && close(fd) == 0);
  char buf[64];
  CHECK(Slurp(B("wd/rel.dat"), buf, sizeof buf) == 3 && strcmp(buf, "cwd") == 0);
  struct stat st;
  CHECK(stat("sub", &st) == 0 && S_ISDIR(st.st_mode));
  CHECK(chdir("sub") == 0 && SameCwd(F("wd/sub")));
  CHECK(chdir("..") == 0 && SameCwd(F("wd")));
  char* dyn = getcwd(NULL, 0);
  CHECK(dyn != NULL && strcmp(dyn, F("wd")) == 0);
  free(dyn);
  dyn = get_current_dir_name();
  CHECK(dyn != NULL && strcmp(dyn, F("wd")) == 0);
  free(dyn);
  CHECK(getcwd(buf, 3) == NULL && errno == ERANGE);
  CHECK(chdir("rel.dat") == -1 && errno == ENOTDIR);
  CHECK(chdir("missing") == -1 && errno == ENOENT);
  CHECK(chdir("") == -1 && errno == ENOENT);
  CHECK(syscall(SYS_mknodat, AT_FDCWD, "probe", S_IFREG | 0600, 0) == -1 && errno == ENOENT);
  CHECK(mknod("node", S_IFREG | 0600, 0) == 0 && stat(B("wd/node"), &st) == 0 &&
        S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
  CHECK(mknod("node", S_IFREG | 0600, 0) == -1 && errno == EEXIST && unlink("node") == 0);
  CHECK(mkfifo("fifo", 0600) == -1 && errno == EPERM && access(B("wd/fifo"), F_OK) == -1);

  pid_t pid = fork();
  if (pid == 0) _exit(SameCwd(F("wd")) && access("rel.dat", F_OK) == 0 ? 0 : 1);
  int status = -1;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0);
  pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", "preload_e2e_prog", "cwd-child", F("wd"), (char*)NULL);
    _exit(127);
  }
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0);

  int dfd = open(F("wd/sub"), O_RDONLY | O_DIRECTORY);
  CHECK(dfd >= 0 && fchdir(dfd) == 0 && SameCwd(F("wd/sub")) && close(dfd) == 0);
  /* Opened without O_DIRECTORY (find and tar do), a directory's descriptor is still one. */
  dfd = open(F("wd"), O_RDONLY);
  CHECK(dfd >= 0 && read(dfd, buf, 1) == -1 && errno == EISDIR);
  CHECK(fchdir(dfd) == 0 && SameCwd(F("wd")));
  DIR* listing = fdopendir(dfd);
  CHECK(listing != NULL && closedir(listing) == 0);
  CHECK(chdir(before) == 0 && SameCwd(before));
  CHECK(access("rel.dat", F_OK) == -1); /* relative to the real directory again */
  CHECK(unlink(F("wd/rel.dat")) == 0 && rmdir(F("wd/sub")) == 0 && rmdir(F("wd")) == 0);
}

/* A shell's `cmd > /fwd/job/out`: the child's stdout is forwarded across exec, and
 * glibc's stdout (which writes with internal calls) reaches it. */
static void TestStdoutRedirectExec(void) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(F("echo.out"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 1) != 1) _exit(3);
    close(fd);
    execl("/bin/echo", "echo", "via-echo", (char*)NULL);
    _exit(127);
  }
  int status = -1;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0);
  char buf[64];
  CHECK(Slurp(B("echo.out"), buf, sizeof buf) == 9 && strcmp(buf, "via-echo\n") == 0);
  /* freopen of stdout onto a forwarded path, in a child to keep the test's stdout. */
  pid = fork();
  if (pid == 0) {
    if (freopen(F("freopen.out"), "w", stdout) == NULL) _exit(3);
    printf("printed %d\n", 7);
    _exit(fclose(stdout) == 0 ? 0 : 4);
  }
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0);
  CHECK(Slurp(B("freopen.out"), buf, sizeof buf) == 10 && strcmp(buf, "printed 7\n") == 0);
}

static void TestClosefrom(void) {
  closefrom(3); /* must not take the interposer's sockets */
  int fd = open(F("after.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd == 3);
  CHECK(write(fd, "alive", 5) == 5);
  close(fd);
  char buf[16];
  CHECK(Slurp(B("after.dat"), buf, sizeof buf) == 5);
}

/* A symbolic link in the forwarded tree that leads out of it (an absolute target elsewhere) is
 * followed in this process's tree, as the kernel follows it: the daemon never follows it. */
static void TestLinksOutOfTheTree(void) {
  char target[600], dir[600];
  snprintf(target, sizeof target, "%s/out.dat", g_local);
  snprintf(dir, sizeof dir, "%s", g_local);
  int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && write(fd, "outside", 7) == 7 && close(fd) == 0);
  CHECK(symlink(target, F("ln-out")) == 0 && symlink(dir, F("ln-dir")) == 0);
  char buf[16] = {0};
  fd = open(F("ln-out"), O_RDONLY);
  /* (a kernel file: a raw read works, where a forwarded placeholder gives EBADF) */
  CHECK(fd >= 0 && syscall(SYS_read, fd, buf, sizeof buf) == 7 && close(fd) == 0);
  CHECK(strcmp(buf, "outside") == 0);
  struct stat st;
  CHECK(stat(F("ln-out"), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 7);
  CHECK(lstat(F("ln-out"), &st) == 0 && S_ISLNK(st.st_mode));
  CHECK(stat(F("ln-dir/out.dat"), &st) == 0 && st.st_size == 7);
  CHECK(lstat(F("ln-dir/out.dat"), &st) == 0 && S_ISREG(st.st_mode));
  CHECK(lstat(F("ln-dir/"), &st) == 0 && S_ISDIR(st.st_mode)); /* a trailing slash follows */
  CHECK(access(F("ln-dir/out.dat"), R_OK) == 0);
  CHECK(faccessat(AT_FDCWD, F("ln-out"), W_OK, AT_SYMLINK_NOFOLLOW) == 0); /* the link itself */
  CHECK(open(F("ln-out"), O_RDONLY | O_NOFOLLOW) == -1 && errno == ELOOP);
  FILE* f = fopen(F("ln-out"), "r");
  CHECK(f != NULL && fgets(buf, sizeof buf, f) != NULL && strcmp(buf, "outside") == 0);
  if (f != NULL) fclose(f);
  DIR* d = opendir(F("ln-dir"));
  int seen = 0;
  for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;)
    seen += !strcmp(e->d_name, "out.dat");
  CHECK(d != NULL && seen == 1 && closedir(d) == 0);
  fd = open(F("ln-dir/made.dat"), O_WRONLY | O_CREAT | O_EXCL, 0644);
  CHECK(fd >= 0 && close(fd) == 0);
  snprintf(target, sizeof target, "%s/made.dat", g_local);
  CHECK(access(target, F_OK) == 0 && unlink(target) == 0);
  /* Changes through a link out of the tree are made there too (the daemon refuses them all). */
  snprintf(target, sizeof target, "%s/out.dat", g_local);
  CHECK(chmod(F("ln-out"), 0600) == 0 && stat(target, &st) == 0 && (st.st_mode & 0777) == 0600);
  CHECK(truncate(F("ln-out"), 3) == 0 && stat(target, &st) == 0 && st.st_size == 3);
  struct timespec times[2] = {{1000000, 0}, {2000000, 0}};
  CHECK(utimensat(AT_FDCWD, F("ln-out"), times, 0) == 0 && stat(target, &st) == 0 &&
        st.st_mtime == 2000000);
  CHECK(chown(F("ln-out"), (uid_t)-1, (gid_t)-1) == 0);
  struct statfs sf;
  CHECK(statfs(F("ln-dir"), &sf) == 0);
  CHECK(mkdir(F("ln-dir/sub"), 0755) == 0 && rmdir(F("ln-dir/sub")) == 0);
  CHECK(symlink("pointee", F("ln-dir/sl")) == 0);
  CHECK(readlink(F("ln-dir/sl"), buf, sizeof buf) == 7 && memcmp(buf, "pointee", 7) == 0);
  CHECK(unlink(F("ln-dir/sl")) == 0);
  CHECK(mknod(F("ln-dir/node"), S_IFREG | 0644, 0) == 0);
  CHECK(rename(F("ln-dir/node"), F("ln-dir/moved")) == 0 &&
        link(F("ln-dir/moved"), F("ln-dir/hard")) == 0);
  CHECK(stat(F("ln-dir/hard"), &st) == 0 && st.st_nlink == 2 && remove(F("ln-dir/hard")) == 0);
  CHECK(rename(F("ln-dir/moved"), F("in-tree")) == -1 && errno == EXDEV); /* (mv copies) */
  /* One end led out, the other local: both in this process's tree, as for the kernel. */
  char local_end[600];
  snprintf(local_end, sizeof local_end, "%s/local-end", g_local);
  CHECK(rename(F("ln-dir/moved"), local_end) == 0 && rename(local_end, F("ln-dir/moved")) == 0);
  CHECK(link(F("ln-dir/moved"), local_end) == 0 && unlink(local_end) == 0);
  CHECK(link(F("missing"), F("ln-dir/x")) == -1 && errno == ENOENT); /* the source first */
  CHECK(remove(F("ln-dir/moved")) == 0);
  CHECK(mkfifo(F("ln-dir/fifo"), 0600) == 0 && lstat(F("ln-dir/fifo"), &st) == 0 &&
        S_ISFIFO(st.st_mode) && unlink(F("ln-dir/fifo")) == 0);
  CHECK(mkfifo(F("fifo-in-tree"), 0600) == -1 && errno == EPERM);
  snprintf(dir, sizeof dir, "%s/node", g_local);
  CHECK(access(dir, F_OK) == -1 && errno == ENOENT);
  CHECK(unlink(target) == 0 && unlink(F("ln-out")) == 0 && unlink(F("ln-dir")) == 0);
}

static int ChildStatus(void (*run)(void));
static void RunDltestProg(void) {
  char* argv[] = {"prog", NULL};
  execv(F("app/prog"), argv);
  _exit(127);
}

/* Copies the local file `from` to the local file `to` (0 on success). */
static int CopyLocal(const char* from, const char* to) {
  char buf[65536];
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
  ssize_t n = 0;
  while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0) {
    if (write(out, buf, (size_t)n) != n) n = -1;
  }
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  return in >= 0 && out >= 0 && n == 0 ? 0 : -1;
}

/* dlopen of a shared object in the forwarded tree, whose dependency the loader finds there only
 * through its RUNPATH $ORIGIN/deps: both are staged and the object works; a name without '/'
 * is the loader's as always. */
static void TestDlopenForwarded(void) {
  const char* lib = getenv("E2E_DLTEST_LIB");
  const char* dep = getenv("E2E_DLTEST_DEP");
  CHECK(lib != NULL && dep != NULL);
  if (lib == NULL || dep == NULL) return;
  CHECK(mkdir(B("plugins"), 0755) == 0 && mkdir(B("plugins/deps"), 0755) == 0);
  CHECK(CopyLocal(lib, B("plugins/libdltest.so")) == 0);
  CHECK(CopyLocal(dep, B("plugins/deps/libdltest_dep.so")) == 0);
  CHECK(dlopen(F("plugins/libdltest.so"), RTLD_NOW | RTLD_NOLOAD) == NULL); /* not loaded yet */
  void* h = dlopen(F("plugins/libdltest.so"), RTLD_NOW);
  if (h == NULL) fprintf(stderr, "dlopen: %s\n", dlerror());
  int (*value)(void) = NULL;
  void* symbol = h != NULL ? dlsym(h, "dltest_value") : NULL;
  memcpy(&value, &symbol, sizeof value); /* (POSIX's way from dlsym to a function) */
  CHECK(value != NULL && value() == 42);
  CHECK(dlopen(F("plugins/libdltest.so"), RTLD_NOW | RTLD_NOLOAD) == h); /* the same object */
  CHECK(dlopen(F("plugins/missing.so"), RTLD_NOW) == NULL);
  CHECK(dlopen("libm.so.6", RTLD_NOW) != NULL);
  /* A forwarded program whose library (and its library) is forwarded too: staged for its
   * loader, which runs before any interposer. */
  const char* prog = getenv("E2E_DLTEST_PROG");
  CHECK(prog != NULL && mkdir(B("app"), 0755) == 0 && mkdir(B("app/lib"), 0755) == 0 &&
        mkdir(B("app/lib/deps"), 0755) == 0);
  CHECK(prog != NULL && CopyLocal(prog, B("app/prog")) == 0);
  CHECK(CopyLocal(lib, B("app/lib/libdltest.so")) == 0);
  CHECK(CopyLocal(dep, B("app/lib/deps/libdltest_dep.so")) == 0);
  CHECK(ChildStatus(RunDltestProg) == 42);
  CHECK(unlink(B("app/lib/deps/libdltest_dep.so")) == 0 && unlink(B("app/lib/libdltest.so")) == 0);
  CHECK(unlink(B("app/prog")) == 0 && rmdir(B("app/lib/deps")) == 0 && rmdir(B("app/lib")) == 0 &&
        rmdir(B("app")) == 0);
  CHECK(unlink(F("plugins/deps/libdltest_dep.so")) == 0 && unlink(F("plugins/libdltest.so")) == 0);
  CHECK(rmdir(F("plugins/deps")) == 0 && rmdir(F("plugins")) == 0);
}

/* libaio on a forwarded file (through the interposer's io_setup/io_submit/io_getevents, found
 * as the first definitions of the process): a reaper already waiting in io_getevents gets an
 * event submitted after it started waiting, and an iocb reused for two requests gives each its
 * own data, as the kernel copies an iocb at submission. */
typedef int (*SetupFn)(int, void**);
typedef int (*SubmitFn)(void*, long, struct iocb**);
typedef int (*GetEventsFn)(void*, long, long, struct io_event*, struct timespec*);
typedef int (*DestroyFn)(void*);
static GetEventsFn g_getevents;
static void* g_aio_ctx;
static struct io_event g_reaped;
static int g_reaped_n = -1;
static void* Reaper(void* arg) {
  (void)arg;
  g_reaped_n = g_getevents(g_aio_ctx, 1, 1, &g_reaped, NULL);
  return NULL;
}
static void* Symbol(const char* name) { return dlsym(RTLD_DEFAULT, name); }
static void TestLinuxAio(void) {
  if (dlopen("libaio.so.1", RTLD_NOW | RTLD_GLOBAL) == NULL) {
    fprintf(stderr, "note: no libaio.so.1, Linux AIO not checked\n");
    return;
  }
  SetupFn setup;
  SubmitFn submit;
  DestroyFn destroy;
  void* p = Symbol("io_setup");
  memcpy(&setup, &p, sizeof p);
  p = Symbol("io_submit");
  memcpy(&submit, &p, sizeof p);
  p = Symbol("io_getevents");
  memcpy(&g_getevents, &p, sizeof p);
  p = Symbol("io_destroy");
  memcpy(&destroy, &p, sizeof p);
  g_aio_ctx = NULL;
  CHECK(setup(8, &g_aio_ctx) == 0);
  int fd = open(F("aio.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && write(fd, "0123456789", 10) == 10);
  pthread_t reaper;
  CHECK(pthread_create(&reaper, NULL, Reaper, NULL) == 0);
  usleep(50000); /* (the reaper is waiting by now) */
  char buf[2][4];
  struct iocb cb;
  memset(&cb, 0, sizeof cb);
  cb.aio_lio_opcode = IOCB_CMD_PREAD;
  cb.aio_fildes = (unsigned)fd;
  cb.aio_buf = (unsigned long)buf[0];
  cb.aio_nbytes = 4;
  cb.aio_offset = 2;
  cb.aio_data = 100;
  struct iocb* list[1] = {&cb};
  CHECK(submit(g_aio_ctx, 1, list) == 1);
  struct timespec limit;
  clock_gettime(CLOCK_REALTIME, &limit);
  limit.tv_sec += 10;
  CHECK(pthread_timedjoin_np(reaper, NULL, &limit) == 0);
  CHECK(g_reaped_n == 1 && g_reaped.data == 100 && g_reaped.res == 4 && !memcmp(buf[0], "2345", 4));
  /* one iocb, two requests: each event has the data it was submitted with */
  CHECK(submit(g_aio_ctx, 1, list) == 1);
  cb.aio_data = 101;
  cb.aio_buf = (unsigned long)buf[1];
  CHECK(submit(g_aio_ctx, 1, list) == 1);
  struct io_event ev[2];
  CHECK(g_getevents(g_aio_ctx, 2, 2, ev, NULL) == 2);
  CHECK(ev[0].data == 100 && ev[1].data == 101 && ev[0].res == 4 && ev[1].res == 4);
  CHECK(destroy(g_aio_ctx) == 0 && close(fd) == 0 && unlink(F("aio.dat")) == 0);
}

/* A last component of "." or ".." names no entry to remove, make or rename: the kernel refuses
 * those calls (their lexical form would name the directory itself). */
static void TestDotLastComponents(void) {
  CHECK(mkdir(F("dots"), 0755) == 0 && mkdir(F("dots/sub"), 0755) == 0);
  CHECK(rmdir(F("dots/sub/.")) == -1 && errno == EINVAL);
  CHECK(rmdir(F("dots/sub/..")) == -1 && errno == ENOTEMPTY);
  CHECK(unlinkat(AT_FDCWD, F("dots/sub/."), AT_REMOVEDIR) == -1 && errno == EINVAL);
  CHECK(unlink(F("dots/sub/.")) == -1 && errno == EISDIR);
  CHECK(remove(F("dots/sub/.")) == -1 && errno == EINVAL);
  CHECK(mkdir(F("dots/sub/."), 0755) == -1 && errno == EEXIST);
  CHECK(symlink("x", F("dots/sub/..")) == -1 && errno == EEXIST);
  CHECK(rename(F("dots/sub/."), F("dots/moved")) == -1 && errno == EBUSY);
  CHECK(rename(F("dots/moved"), F("dots/sub/.")) == -1 && errno == EBUSY);
  CHECK(rmdir(F("dots/nosuch/.")) == -1 && errno == ENOENT);
  struct stat st;
  CHECK(stat(F("dots/sub"), &st) == 0 && S_ISDIR(st.st_mode));
  CHECK(rmdir(F("dots/sub")) == 0 && rmdir(F("dots")) == 0);
}

/* system() and popen() from a forwarded working directory, with a forwarded descriptor to
 * inherit: the shell starts there and writes through the descriptor; its exit status comes back. */
static void TestSystem(void) {
  char before[1024];
  CHECK(getcwd(before, sizeof before) != NULL);
  CHECK(mkdir(F("sy"), 0755) == 0 && chdir(F("sy")) == 0);
  int fd = open("inherited.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && dup2(fd, 5) == 5 && close(fd) == 0);
  CHECK(system("echo made > rel.out && echo via-fd >&5") == 0);
  int status = system("test -f rel.out && exit 3");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
  CHECK(system(NULL) != 0);
  /* popen both ways, from the same directory; pclose gives the shell's status. */
  FILE* p = popen("cat rel.out", "r");
  char line[64] = {0};
  CHECK(p != NULL && fgets(line, sizeof line, p) != NULL && strcmp(line, "made\n") == 0);
  CHECK(p != NULL && pclose(p) == 0);
  p = popen("cat > piped.out; exit 4", "w");
  CHECK(p != NULL && fputs("through the pipe\n", p) >= 0);
  status = p != NULL ? pclose(p) : -1;
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 4);
  CHECK(close(5) == 0);
  char buf[64];
  CHECK(Slurp(B("sy/rel.out"), buf, sizeof buf) == 5 && strcmp(buf, "made\n") == 0);
  CHECK(Slurp(B("sy/inherited.log"), buf, sizeof buf) == 7 && strcmp(buf, "via-fd\n") == 0);
  CHECK(Slurp(B("sy/piped.out"), buf, sizeof buf) == 17 && strcmp(buf, "through the pipe\n") == 0);
  CHECK(unlink("rel.out") == 0 && unlink("inherited.log") == 0 && unlink("piped.out") == 0);
  CHECK(chdir(before) == 0 && rmdir(F("sy")) == 0);
}

/* Whether the shell of a new popen() has descriptor `fd` open ("open" or "closed"). */
static int ShellHas(int fd) {
  char command[128], line[16] = {0};
  snprintf(command, sizeof command, "test -e /proc/self/fd/%d && echo open || echo closed", fd);
  FILE* p = popen(command, "r");
  CHECK(p != NULL && fgets(line, sizeof line, p) != NULL);
  if (p != NULL) CHECK(pclose(p) == 0);
  return strcmp(line, "open\n") == 0;
}

/* POSIX: the streams of earlier popen() calls are closed in a later one's child, whether libc
 * made them (nothing to hand over then) or the interposer (a forwarded descriptor to inherit).
 * A writer's shell that kept another's pipe would keep it from seeing EOF. */
static void TestPopenStreamsClosedInLaterShells(void) {
  FILE* glibc_made = popen("cat > /dev/null", "w"); /* local directory, no forwarded fd */
  CHECK(glibc_made != NULL);
  int fd = open(F("popen.log"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && dup2(fd, 6) == 6 && close(fd) == 0); /* now something to hand over */
  FILE* ours = popen("cat > /dev/null", "w");
  CHECK(ours != NULL);
  CHECK(!ShellHas(fileno(glibc_made)));
  CHECK(close(6) == 0); /* nothing to hand over again, but one of ours is open */
  CHECK(!ShellHas(fileno(ours)));
  CHECK(pclose(ours) == 0 && pclose(glibc_made) == 0);
  CHECK(unlink(F("popen.log")) == 0);
}

/* Forks, runs `run` in the child, returns the child's exit status (-1 if it did not exit). */
static int ChildStatus(void (*run)(void)) {
  pid_t pid = fork();
  if (pid == 0) {
    run();
    _exit(126);
  }
  int status = -1;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}
static void RunScript(void) {
  char* argv[] = {"s.sh", "one", NULL};
  execv(F("x/s.sh"), argv);
  _exit(errno == EACCES ? 101 : 100);
}
static void RunCopiedShell(void) {
  char* argv[] = {"mysh", "-c", "exit 7", NULL};
  execv(F("x/mysh"), argv);
}
static void RunFromPath(void) {
  char path[1200];
  snprintf(path, sizeof path, "%s:/bin:/usr/bin", F("x"));
  setenv("PATH", path, 1);
  execlp("s.sh", "s.sh", "two", (char*)NULL);
}
static void RunPlainFile(void) {
  execl(F("x/plain"), "plain", (char*)NULL);
  _exit(errno == EACCES ? 101 : 100);
}
static void RunMissing(void) {
  execl(F("x/missing"), "missing", (char*)NULL);
  _exit(errno == ENOENT ? 102 : 100);
}

/* Programs on forwarded paths run: a script through its interpreter with its path as given
 * (so $0 names it), any other file from a copy in memory; PATH may name forwarded directories.
 * The kernel's errors stay: EACCES without execute permission, ENOENT when missing. */
static void TestExecForwardedPrograms(void) {
  CHECK(mkdir(F("x"), 0755) == 0);
  int fd = open(F("x/s.sh"), O_WRONLY | O_CREAT | O_TRUNC, 0755);
  const char* script = "#!/bin/sh\necho \"$0 $1\" >> \"$(dirname \"$0\")/ran\"\n";
  CHECK(fd >= 0 && write(fd, script, strlen(script)) == (ssize_t)strlen(script) && close(fd) == 0);
  CHECK(ChildStatus(RunScript) == 0);
  int in = open("/bin/sh", O_RDONLY);
  fd = open(F("x/mysh"), O_WRONLY | O_CREAT | O_TRUNC, 0755);
  char buf[65536];
  ssize_t n;
  while (in >= 0 && fd >= 0 && (n = read(in, buf, sizeof buf)) > 0)
    CHECK(write(fd, buf, (size_t)n) == n);
  CHECK(in >= 0 && close(in) == 0 && fd >= 0 && close(fd) == 0);
  CHECK(ChildStatus(RunCopiedShell) == 7);
  CHECK(ChildStatus(RunFromPath) == 0);
  /* posix_spawn (what make and Python use) runs them too: the copied shell, and the script
   * through posix_spawnp's PATH search. */
  extern char** environ;
  pid_t spawned = -1;
  char* sh_argv[] = {"mysh", "-c", "exit 5", NULL};
  int status = -1;
  CHECK(posix_spawn(&spawned, F("x/mysh"), NULL, NULL, sh_argv, environ) == 0 &&
        waitpid(spawned, &status, 0) == spawned && WIFEXITED(status) && WEXITSTATUS(status) == 5);
  /* File actions that replace the descriptor number the copy gets here (the lowest free one)
   * do not change what runs. */
  int lowest = open("/dev/null", O_RDONLY);
  CHECK(lowest >= 0 && close(lowest) == 0);
  posix_spawn_file_actions_t fa;
  CHECK(posix_spawn_file_actions_init(&fa) == 0 &&
        posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, lowest) == 0);
  CHECK(posix_spawn(&spawned, F("x/mysh"), &fa, NULL, sh_argv, environ) == 0 &&
        waitpid(spawned, &status, 0) == spawned && WIFEXITED(status) && WEXITSTATUS(status) == 5);
  posix_spawn_file_actions_destroy(&fa);
  char* old_path = strdup(getenv("PATH") ? getenv("PATH") : "/bin:/usr/bin");
  char* path = malloc(strlen(F("x")) + strlen(old_path) + 2);
  sprintf(path, "%s:%s", F("x"), old_path);
  setenv("PATH", path, 1);
  char* script_argv[] = {"s.sh", "three", NULL};
  CHECK(posix_spawnp(&spawned, "s.sh", NULL, NULL, script_argv, environ) == 0 &&
        waitpid(spawned, &status, 0) == spawned && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  setenv("PATH", old_path, 1);
  free(path);
  free(old_path);
  CHECK(posix_spawn(&spawned, F("x/missing"), NULL, NULL, sh_argv, environ) == ENOENT);
  char want[1200], got[1200];
  snprintf(want, sizeof want, "%s one\n%s two\n%s three\n", F("x/s.sh"), F("x/s.sh"), F("x/s.sh"));
  CHECK(Slurp(B("x/ran"), got, sizeof got) > 0 && strcmp(got, want) == 0);
  fd = open(F("x/plain"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && write(fd, "#!/bin/sh\n", 10) == 10 && close(fd) == 0);
  CHECK(ChildStatus(RunPlainFile) == 101);
  CHECK(ChildStatus(RunMissing) == 102);
  const char* names[] = {"x/s.sh", "x/mysh", "x/ran", "x/plain"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) CHECK(unlink(F(names[i])) == 0);
  CHECK(rmdir(F("x")) == 0);
}

/* A private mapping of a forwarded file holds the file's bytes (zeros after its end, in its last
 * page); writing it leaves the file alone. A shared one is ENODEV, and the kernel's errors for
 * a directory, a write-only descriptor and an unaligned offset are kept. */
static void TestPrivateMappings(void) {
  const long page = sysconf(_SC_PAGESIZE);
  int fd = open(F("map.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  char* data = malloc((size_t)page + 100);
  for (long i = 0; i < page + 100; ++i) data[i] = (char)('a' + i % 26);
  CHECK(write(fd, data, (size_t)page + 100) == page + 100);
  char* m = mmap(NULL, (size_t)page * 2, PROT_READ, MAP_PRIVATE, fd, 0);
  CHECK(m != MAP_FAILED);
  if (m != MAP_FAILED) {
    CHECK(memcmp(m, data, (size_t)page + 100) == 0 && m[page + 100] == 0 && m[2 * page - 1] == 0);
    CHECK(munmap(m, (size_t)page * 2) == 0);
  }
  m = mmap(NULL, 100, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, page); /* from the second page */
  CHECK(m != MAP_FAILED);
  if (m != MAP_FAILED) {
    CHECK(memcmp(m, data + page, 100) == 0);
    memset(m, 'Z', 100);
    CHECK(munmap(m, 100) == 0);
  }
  char back[64];
  CHECK(pread(fd, back, 1, page) == 1 && back[0] == data[page]);
  errno = 0;
  CHECK(mmap(NULL, 100, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED && errno == ENODEV);
  CHECK(mmap(NULL, 100, PROT_READ, MAP_PRIVATE, fd, 1) == MAP_FAILED && errno == EINVAL);
  CHECK(close(fd) == 0);
  fd = open(F("map.dat"), O_WRONLY);
  CHECK(fd >= 0 && mmap(NULL, 100, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED && errno == EACCES);
  CHECK(close(fd) == 0);
  int dfd = open(g_fwd, O_RDONLY | O_DIRECTORY);
  CHECK(dfd >= 0 && mmap(NULL, 100, PROT_READ, MAP_PRIVATE, dfd, 0) == MAP_FAILED &&
        errno == ENODEV);
  CHECK(close(dfd) == 0);
  CHECK(Slurp(B("map.dat"), back, sizeof back) > 0 && back[0] == 'a');
  CHECK(unlink(F("map.dat")) == 0);
  free(data);
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "exec-child") == 0) {
    int fd = atoi(argv[2]);
    /* The new image re-opened fd at the old offset: "B" lands after "A". */
    if (lseek(fd, 0, SEEK_CUR) != 1) return 2;
    return write(fd, "B", 1) == 1 ? 0 : 1;
  }
  if (argc == 3 && strcmp(argv[1], "cwd-child") == 0) {
    /* Exec'd from a forwarded working directory: starts in it. */
    return SameCwd(argv[2]) && access("rel.dat", R_OK) == 0 ? 0 : 1;
  }
  if (argc != 4) {
    fprintf(stderr, "usage: %s PREFIX BACKING_DIR LOCAL_DIR\n", argv[0]);
    return 2;
  }
  snprintf(g_fwd, sizeof g_fwd, "%s", argv[1]);
  snprintf(g_back, sizeof g_back, "%s", argv[2]);
  snprintf(g_local, sizeof g_local, "%s", argv[3]);
  TestBasicIo();
  TestPlaceholderFindsNothing();
  TestModesTimesAndLinks();
  TestTrailingSlashNamesADirectory();
  TestDotDotAfterASymlink();
  TestFdopenAppends();
  TestUmaskApplies();
  TestDirectorySyncAndTmpfile();
  TestRewinddirRefreshes();
  TestFstatSeesThisProcessesChanges();
  TestFlockAndLockf();
  TestTempNames();
  TestLocalStillWorks();
  TestNamespace();
  TestDupAndFork();
  TestStdio();
  TestAio();
  TestLocks();
  TestExec(argv[0]);
  TestStdoutRedirectExec();
  TestWorkingDirectory();
  TestClosefrom();
  TestPrivateMappings();
  TestExecForwardedPrograms();
  TestLinksOutOfTheTree();
  TestDotLastComponents();
  TestDlopenForwarded();
  TestLinuxAio();
  TestAioErrorFromTwoThreads();
  TestSystem();
  TestPopenStreamsClosedInLaterShells();
  printf("%s: %d checks\n", g_failed ? "FAILED" : "passed", g_step);
  return g_failed;
}
