// Shared helpers of the per-file C API: run remotely, or directly once the file has fallen
// back (IORELAY_FALLBACK=direct) because its daemon was lost.
#pragma once

#include "client/client.h"
#include "client/direct.h"

namespace iorelay::client {

// After a call on daemon `failed_server` went unanswered: with failover (Client::failover),
// marks that daemon dead and, for a file whose offset the client holds, reopens it on the
// survivor (open flags less O_CREAT, O_EXCL, O_TRUNC) and points f there. True when the caller
// may repeat its call there; false (f unchanged) otherwise: no failover, no survivor, or the
// daemon held the offset (O_APPEND, shared after fork), whose calls keep failing with EIO.
bool FailOver(iorelay_file* f, int failed_server);

// With a job map (Client::has_map), at the start of each call on f: when the map's epoch moved
// past the file's, the file is placed again and, if that is another daemon, moved there (its
// buffered writes flushed first, reopened at the offset the client holds, the old handle
// closed). Files whose offset the daemon holds stay until closed. Not under the file's
// buffers' lock (FileBuffers::mu), which the flush takes.
void FollowMap(iorelay_file* f);

// A transfer as the daemon carries it out, past the file's buffers (file_io.cc): a count or
// -errno; an unanswered request fails over or falls back as any call.
ssize_t SendTransfer(iorelay_file* f, IoKind kind, const struct iovec* iov, int count,
                     off_t offset);

// `remote()` gives Result<long>: ok holds a value or -errno from the daemon; not ok means
// the transport failed, after which the file moves to a surviving daemon (failover) or to
// direct access (IORELAY_FALLBACK=direct) if configured, and the call is repeated there.
template <class Remote, class Direct>
long FileOp(iorelay_file* f, Remote remote, Direct direct) {
  if (!f) return -EBADF;
  if (int fd = f->direct_fd.load(); fd >= 0) return direct(fd);
  if (f->client->has_map()) FollowMap(f);
  const int server = f->server.load();
  Result<long> r = remote();
  if (r.ok()) return *r;
  if (FailOver(f, server)) return FileOp(f, remote, direct);
  if (SwitchToDirect(f)) return direct(f->direct_fd.load());
  return -r.status().code();
}

// An outcome as the remote side of FileOp and PathOp gives it: answered, 0 or -errno; not
// answered, the Status that lets the fallback act.
inline Result<long> StatusOnly(const Outcome& out) {
  if (!out.answered) return out.status;
  return static_cast<long>(out.NegErrno());
}

// A change through the description (write, truncate, allocate): the open's attributes are
// stale and close must wait for its answer.
inline void NoteChange(iorelay_file* f) {
  f->attrs_fresh.store(false);
  f->changes.fetch_add(1);
  f->client->NoteChange();
}

// Moves a file's offset from the client to the daemon's handle (before a fork shares the
// description, or when O_APPEND is set) and keeps it there. The caller holds f->offset_mu.
// 0 or -errno.
int HandOffsetToDaemon(iorelay_file* f) REQUIRES(f->offset_mu);
// Whether the client may hold `f`'s offset: a regular file, not appending, not served directly.
bool MayHoldOffset(const iorelay_file* f);
// Takes the daemon's answer about the offset; when it says no other process shares the
// description any more (after fork), the client holds the offset again. Under offset_mu.
void NoteDaemonOffset(iorelay_file* f, const proto::OffsetReply& rep);

}  // namespace iorelay::client
