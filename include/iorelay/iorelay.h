/* libiorelay: forward POSIX file I/O to iorelayd I/O-node daemons.
 *
 * A client is one per process. It holds connections to one or more daemons and maps
 * each file to one of them by a placement policy applied per client node (or per
 * file), never per request. Every call returns 0 (or a count) on success and a
 * NEGATIVE errno on failure, the errno a local file system would give; an
 * unreachable, dead or stopped daemon gives -EIO within the configured liveness bound.
 * All functions are thread-safe: many threads may have requests in flight at once.
 *
 * Configuration from the environment (iorelay_client_from_env): IORELAY_SERVERS (the
 * daemons), IORELAY_SECRET_FILE (the job credential), IORELAY_PREFIX (the forwarded paths) and
 * the others that `iorelay-ctl env` lists with their values and defaults (docs/interposer.md,
 * "Environment").
 */
#ifndef IORELAY_IORELAY_H_
#define IORELAY_IORELAY_H_

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "iorelay/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH" (IORELAY_VERSION in iorelay/version.h is the
 * version the caller was built against). Static storage; never NULL. */
const char* iorelay_version(void);

typedef struct iorelay_client iorelay_client;
/* An open remote file (one open file description: shared offset and status flags). */
typedef struct iorelay_file iorelay_file;

/* Creates a client from the environment. Returns NULL and sets *err (negative errno)
 * when the configuration is missing or invalid; connects lazily, on first use. */
iorelay_client* iorelay_client_from_env(int* err);
/* The same, and on failure a one-line reason in `why` (NUL-terminated, cut to `why_size`),
 * naming the variable or file at fault: "IORELAY_PREFIX entries must be absolute". */
iorelay_client* iorelay_client_from_env_why(int* err, char* why, size_t why_size);
void iorelay_client_destroy(iorelay_client* c);

/* 1 if the absolute, lexically normalised path lies under a forwarded prefix. */
int iorelay_is_forwarded(const iorelay_client* c, const char* abs_path);

/* The client's own descriptors (daemon sockets) must survive an application's
 * close, dup2, close_range and closefrom. iorelay_is_internal_fd is lock-free and
 * async-signal-safe. iorelay_move_internal_fd moves the client's descriptor off `fd`
 * (to a free number) so that the application may take `fd`; returns 0 or -errno. */
int iorelay_is_internal_fd(const iorelay_client* c, int fd);
int iorelay_move_internal_fd(iorelay_client* c, int fd);

/* Call in the parent just before fork() (an atfork prepare handler): the offsets the client
 * holds move to the daemon, where parent and child will share them. Then, in the child after
 * fork(), iorelay_after_fork_child: new connections; the child's files keep sharing offsets
 * with the parent's. */
void iorelay_before_fork(iorelay_client* c);
void iorelay_after_fork_parent(iorelay_client* c);
int iorelay_after_fork_child(iorelay_client* c);

/* Write-behind (IORELAY_WRITE_BEHIND=on): sends what every file holds unsent and waits for
 * the daemons' answers; a failure is written to stderr with the file's path (nothing will
 * report it later: call before exec and at exit). 0 or the first -errno.
 * iorelay_client_destroy does it too. */
int iorelay_flush(iorelay_client* c);
/* As iorelay_flush, but a file another thread is using at that moment is left unsent (and
 * reported): for _exit, which a signal handler may call while a thread holds a file. */
int iorelay_flush_nowait(iorelay_client* c);

/* Files. iorelay_close releases the description (and, POSIX-like, this process's
 * record locks on the file); the iorelay_file is freed even when it returns an error.
 * A created file or directory (iorelay_open with O_CREAT, iorelay_mkdir) gets `mode` as it is:
 * no file mode creation mask applies, neither the caller's nor the daemon's (the interposer
 * applies the application's umask before it calls these). */
int iorelay_open(iorelay_client* c, const char* path, int flags, mode_t mode, iorelay_file** out);
int iorelay_close(iorelay_file* f);
ssize_t iorelay_pread(iorelay_file* f, void* buf, size_t n, off_t offset);
ssize_t iorelay_pwrite(iorelay_file* f, const void* buf, size_t n, off_t offset);
ssize_t iorelay_preadv(iorelay_file* f, const struct iovec* iov, int iovcnt, off_t offset);
ssize_t iorelay_pwritev(iorelay_file* f, const struct iovec* iov, int iovcnt, off_t offset);

/* Many requests in flight from one thread (the POSIX AIO wrappers use these): a submit sends a
 * positional read or write on a connection of its own and returns at once with *out, so the
 * daemon can queue and merge requests the caller has not waited for yet. When no connection is
 * free (IORELAY_MAX_CONNECTIONS) or the request is larger than one request may be, it is
 * carried out before the submit returns; iorelay_request_wait then returns its result. The
 * buffer stays in use until iorelay_request_wait returns. Returns 0, or -errno with *out unset.
 * iorelay_request_ready: 1 if the result is there (wait returns without blocking), else 0.
 * iorelay_request_wait: waits, frees the request, returns the count or -errno. */
typedef struct iorelay_request iorelay_request;
int iorelay_submit_pread(iorelay_file* f, void* buf, size_t n, off_t offset, iorelay_request** out);
int iorelay_submit_pwrite(iorelay_file* f, const void* buf, size_t n, off_t offset,
                          iorelay_request** out);
int iorelay_request_ready(iorelay_request* r);
ssize_t iorelay_request_wait(iorelay_request* r);
/* At the shared file offset (O_APPEND: writes at the end). */
ssize_t iorelay_read(iorelay_file* f, void* buf, size_t n);
ssize_t iorelay_write(iorelay_file* f, const void* buf, size_t n);
ssize_t iorelay_readv(iorelay_file* f, const struct iovec* iov, int iovcnt);
ssize_t iorelay_writev(iorelay_file* f, const struct iovec* iov, int iovcnt);
off_t iorelay_lseek(iorelay_file* f, off_t offset, int whence);
int iorelay_fsync(iorelay_file* f, int datasync);
int iorelay_ftruncate(iorelay_file* f, off_t length);
int iorelay_fallocate(iorelay_file* f, int mode, off_t offset, off_t length);
int iorelay_fstat(iorelay_file* f, struct stat* st);
int iorelay_fstatfs(iorelay_file* f, struct statfs* st);
/* fchmod (set-user-ID and set-group-ID are dropped unless the daemon allows them) and futimens
 * (times as utimensat takes them; NULL: both now). */
int iorelay_fchmod(iorelay_file* f, mode_t mode);
int iorelay_futimens(iorelay_file* f, const struct timespec times[2]);
/* Status flags as F_GETFL reports them (access mode included); F_SETFL. */
int iorelay_getfl(iorelay_file* f);
int iorelay_setfl(iorelay_file* f, int flags);
/* Process-associated record locks: F_GETLK, F_SETLK, F_SETLKW (any l_whence). */
int iorelay_lock(iorelay_file* f, int cmd, struct flock* lk);
/* The path given at open, for diagnostics. */
const char* iorelay_file_path(const iorelay_file* f);
/* Duplicates the reference (as dup() does): both share offset and flags; each must
 * be closed. */
iorelay_file* iorelay_file_ref(iorelay_file* f);

/* Paths (absolute). */
int iorelay_stat(iorelay_client* c, const char* path, struct stat* st, int nofollow);
int iorelay_statfs(iorelay_client* c, const char* path, struct statfs* st);
int iorelay_access(iorelay_client* c, const char* path, int mode);
int iorelay_unlink(iorelay_client* c, const char* path);
int iorelay_mkdir(iorelay_client* c, const char* path, mode_t mode);
int iorelay_chmod(iorelay_client* c, const char* path, mode_t mode);
int iorelay_rmdir(iorelay_client* c, const char* path);
int iorelay_rename(iorelay_client* c, const char* from, const char* to, unsigned flags);
int iorelay_truncate(iorelay_client* c, const char* path, off_t length);
ssize_t iorelay_readlink(iorelay_client* c, const char* path, char* buf, size_t size);
/* utimensat: times as it takes them (NULL: both now); nofollow: of a final symbolic link. */
int iorelay_utimens(iorelay_client* c, const char* path, const struct timespec times[2],
                    int nofollow);
/* symlink(target, path): the target is stored as given. link: `from` and `to` on one daemon
 * (else EXDEV); follow: link the file a final symbolic link of `from` names. */
int iorelay_symlink(iorelay_client* c, const char* target, const char* path);
int iorelay_link(iorelay_client* c, const char* from, const char* to, int follow);

/* Directory listings, a page at a time from the daemon: a listing holds one page, however
 * large the directory. */
typedef struct iorelay_dirent {
  uint64_t ino;
  unsigned char type; /* DT_* */
  const char* name;
} iorelay_dirent;
typedef struct iorelay_dir iorelay_dir;
/* 0 with the first page fetched, or -errno. */
int iorelay_opendir(iorelay_client* c, const char* path, iorelay_dir** out);
/* The next entry: 1 with *entry set, 0 at the end, or -errno (errno is neither read nor
 * set). The entry stays valid until the next call on d. */
int iorelay_readdir_next(iorelay_dir* d, const iorelay_dirent** entry);
/* Next entry, or NULL at the end or on an error (then errno is set, as readdir(3) does; it is
 * left alone at the end and on success). The entry stays valid until the next call on d. */
const iorelay_dirent* iorelay_readdir(iorelay_dir* d);
/* Where the listing stands (0: the start), for iorelay_seekdir on the same d. A position names
 * the same entry while the directory is unchanged. */
uint64_t iorelay_telldir(const iorelay_dir* d);
/* The next entry read is the one at `pos` (from iorelay_telldir on d); its page is fetched by
 * that read, which reports any error. Another value is ignored. */
void iorelay_seekdir(iorelay_dir* d, uint64_t pos);
/* Back to the start; the next read lists the directory as it is then. */
void iorelay_rewinddir(iorelay_dir* d);
void iorelay_closedir(iorelay_dir* d);

/* The daemon's counters as JSON (malloc'ed, caller frees). server: index into
 * IORELAY_SERVERS. */
int iorelay_stats_json(iorelay_client* c, int server, char** json_out);

#ifdef __cplusplus
}
#endif

#endif /* IORELAY_IORELAY_H_ */
