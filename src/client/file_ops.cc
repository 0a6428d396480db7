// The per-file C API other than data transfer and locks: open, close, seek, sync, size,
// stat, status flags, references.
#include "client/file_ops.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "client/internal_fds.h"
#include "client/placement.h"
#include "proto/stat_convert.h"

namespace proto = iorelay::proto;
using iorelay::Result;
using iorelay::client::CallReply;
using iorelay::client::Client;
using iorelay::client::FileOp;
using iorelay::client::Outcome;
using iorelay::client::StatusOnly;
using iorelay::client::Sys;

namespace {

constexpr int kSettableFlags = O_APPEND | O_ASYNC | O_DIRECT | O_NOATIME | O_NONBLOCK;

// The kernel's O_LARGEFILE, which it reports on every descriptor of a 64-bit process (glibc
// defines O_LARGEFILE as 0 there).
constexpr int kKernelLargeFile = 0100000;

int StatusFlagsFromOpen(int flags) {
  return (flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC)) | kKernelLargeFile;
}

iorelay_file* NewFile(Client* c, int server, const char* path, int flags) {
  auto* f = new iorelay_file;
  f->client = c;
  f->server = server;
  f->path = path;
  f->open_flags = flags;
  f->status_flags.store(StatusFlagsFromOpen(flags));
  return f;
}

// Daemon unreachable at open and IORELAY_FALLBACK=direct: the file is opened directly.
int OpenDirectFile(Client* c, int server, const char* path, int flags, mode_t mode,
                   iorelay_file** out) {
  int fd = iorelay::client::OpenDirect(c, path, flags, mode);
  if (fd < 0) return fd;
  iorelay_file* f = NewFile(c, server, path, flags);
  struct stat st {};
  if (syscall(SYS_fstat, fd, &st) == 0) {
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    f->st_mode = st.st_mode;
  }
  f->direct_fd.store(fd);
  c->Register(f);
  *out = f;
  return 0;
}

}  // namespace

namespace iorelay::client {

int HandOffsetToDaemon(iorelay_file* f) {
  if (!f->local_offset.load()) return 0;
  const int64_t at = f->offset.load();
  if (f->direct_fd.load() < 0) {
    proto::OffsetReply rep;
    Outcome r =
        f->client->CallMsg(f->server, proto::Op::kLseek,
                           proto::LseekRequest{f->handle, at, SEEK_SET}, &rep, f->generation);
    if (r.answered && !r.ok()) return r.NegErrno();
    // Not answered: the daemon is gone, and with it the handle; the direct fallback (if any)
    // positions its descriptor at `offset`.
  } else if (syscall(SYS_lseek, f->direct_fd.load(), static_cast<off_t>(at), SEEK_SET) < 0) {
    return -errno;
  }
  f->local_offset.store(false);
  return 0;
}

namespace {

// Reopens f on daemon `to` at the offset the client holds (open flags less O_CREAT, O_EXCL,
// O_TRUNC) and points f there, unless another thread moved it off `from` already; the handle
// on `from` is closed when the job still uses that daemon. False (f unchanged) when `to` does
// not open it.
bool MoveFile(iorelay_file* f, int from, int to) {
  Client* c = f->client;
  MutexLock l(f->direct_mu);
  if (f->server.load() != from) return true;
  if (to < 0 || to == from) return false;
  const std::vector<uint8_t> fields = proto::EncodeFields(
      proto::OpenRequest{f->path, f->open_flags & ~(O_CREAT | O_EXCL | O_TRUNC), 0});
  CallReply reply;
  Outcome r = c->Call(to, {.op = proto::Op::kOpen, .fields = fields}, &reply);
  proto::OpenReply rep;
  if (!r.ok() || !proto::DecodeFields(reply.payload, &rep).ok()) return false;
  const uint64_t old_handle = f->handle.exchange(rep.handle);
  const uint64_t old_generation = f->generation.exchange(reply.generation);
  if (reply.max_io_bytes != 0) f->max_io_bytes = reply.max_io_bytes;
  f->server.store(to);
  if (c->IsActive(from)) {
    (void)c->Post(from, {.op = proto::Op::kClose,
                         .fields = proto::EncodeFields(proto::HandleRequest{old_handle}),
                         .generation = old_generation});
  }
  return true;
}

}  // namespace

void FollowMap(iorelay_file* f) {
  Client* c = f->client;
  c->RefreshMap(false);
  const uint64_t epoch = c->map_epoch();
  uint64_t seen = f->map_epoch.load();
  // One thread places the file per epoch; the others carry on where it is.
  if (seen == epoch || !f->map_epoch.compare_exchange_strong(seen, epoch)) return;
  // A file whose offset the daemon holds (O_APPEND, shared after fork) stays until closed.
  if (f->direct_fd.load() >= 0 || !f->local_offset.load()) return;
  const int from = f->server.load();
  const int to = c->ServerFor(f->path);
  if (to == from) return;
  // What the client buffers goes out where the file is (write order holds), then it moves.
  if (f->buffers) (void)FlushWrites(f);
  (void)MoveFile(f, from, to);
}

bool FailOver(iorelay_file* f, int failed_server) {
  Client* c = f->client;
  if (!c->failover()) return false;
  if (c->has_map()) {
    c->RefreshMap(true);
    if (!c->IsActive(failed_server)) {  // released by the pool: a planned move, not a death
      f->map_epoch.store(c->map_epoch());
      if (!f->local_offset.load()) return false;
      return MoveFile(f, failed_server, c->ServerFor(f->path));
    }
  }
  MutexLock l(f->direct_mu);
  if (f->server.load() != failed_server) return true;  // another thread moved it already
  int to = c->ReplaceDead(failed_server);
  if (!f->local_offset.load()) return false;
  const std::vector<uint8_t> fields = proto::EncodeFields(
      proto::OpenRequest{f->path, f->open_flags & ~(O_CREAT | O_EXCL | O_TRUNC), 0});
  for (; to >= 0; to = c->ReplaceDead(to)) {
    CallReply reply;
    Outcome r = c->Call(to, {.op = proto::Op::kOpen, .fields = fields}, &reply);
    if (!r.answered) continue;
    proto::OpenReply rep;
    if (!r.ok() || !proto::DecodeFields(reply.payload, &rep).ok()) return false;
    f->handle.store(rep.handle);
    f->generation.store(reply.generation);
    if (reply.max_io_bytes != 0) f->max_io_bytes = reply.max_io_bytes;
    f->server.store(to);
    return true;
  }
  return false;
}

void Client::BeforeFork() {
  // The flusher stops sweeping (and is out of its sweep) before fork copies its locks.
  fork_hold_.fetch_add(1);
  while (sweeping_.load()) sched_yield();
  MutexLock l(files_mu_);
  std::vector<std::vector<uint64_t>> handles(server_count());
  for (iorelay_file* f : files_) {
    // Unsent writes go out once, from the parent (a failure shows at the file's next call).
    (void)FlushWrites(f);
    MutexLock o(f->offset_mu);
    (void)HandOffsetToDaemon(f);  // a failure shows at the file's next call
    if (f->direct_fd.load() < 0) handles[f->server.load()].push_back(f->handle.load());
  }
  // The child will adopt these: until it has, no daemon tells this process it is their only
  // holder (a failure shows when the child adopts).
  for (int i = 0; i < server_count(); ++i) {
    if (handles[i].empty()) continue;
    (void)CallMsg<proto::ExpectAdoptRequest, proto::Empty>(
        i, proto::Op::kExpectAdopt, proto::ExpectAdoptRequest{std::move(handles[i])}, nullptr);
  }
}

bool MayHoldOffset(const iorelay_file* f) {
  return proto::ClientMayKeepOffset(f->st_mode, f->status_flags.load()) && f->direct_fd.load() < 0;
}

void NoteDaemonOffset(iorelay_file* f, const proto::OffsetReply& rep) {
  f->offset.store(rep.offset);
  if (rep.sole != 0 && MayHoldOffset(f)) f->local_offset.store(true);
}

}  // namespace iorelay::client

extern "C" {

int iorelay_open(iorelay_client* c, const char* path, int flags, mode_t mode, iorelay_file** out) {
  if (!c || !path || !out) return -EINVAL;
  if (path[0] != '/') return -EINVAL;
  Client* cl = c->impl.get();
  cl->FlushIfBuffered();  // an open (O_TRUNC, or of another process's view) after the writes
  cl->RefreshMap(false);
  const uint64_t map_epoch = cl->map_epoch();  // before placing: a newer one moves it later
  int server = cl->ServerFor(path);
  proto::OpenRequest req{path, flags, static_cast<uint32_t>(mode)};
  if (!proto::StringsFit(req)) return -ENAMETOOLONG;
  // A create changes its directory, a truncate its file: listed attributes may be stale.
  if (flags & (O_CREAT | O_TRUNC)) cl->NoteChange();
  const std::vector<uint8_t> fields = proto::EncodeFields(req);
  iorelay::client::CallReply info;
  iorelay::client::Outcome r = cl->Call(server, {.op = proto::Op::kOpen, .fields = fields}, &info);
  // Failover: the open is repeated on the survivor (an O_EXCL open the dead daemon carried out
  // then reports EEXIST).
  for (int next; !r.answered && (next = cl->ReplaceDead(server)) >= 0;) {
    server = next;
    info = {};
    r = cl->Call(server, {.op = proto::Op::kOpen, .fields = fields}, &info);
  }
  if (!r.answered && r.status.code() == EIO &&
      cl->config().fallback == iorelay::client::Fallback::kDirect) {
    return OpenDirectFile(cl, server, path, flags, mode, out);
  }
  if (!r.ok()) return r.NegErrno();
  proto::OpenReply rep;
  if (!proto::DecodeFields(info.payload, &rep).ok()) return -EIO;
  iorelay_file* f = NewFile(cl, server, path, flags);
  f->map_epoch = map_epoch;
  f->handle = rep.handle;
  f->generation = info.generation;
  if (info.max_io_bytes != 0) f->max_io_bytes = info.max_io_bytes;
  f->dev = rep.attrs.dev;
  f->ino = rep.attrs.ino;
  f->st_mode = rep.attrs.mode;
  f->open_attrs = rep.attrs;
  f->opened_ns = iorelay::client::MonotonicNs();
  f->opened_changes = f->client->changes();
  f->attrs_fresh.store(true);
  // A regular file not opened for appending: the offset starts at 0 and stays with the client.
  f->local_offset.store(proto::ClientMayKeepOffset(rep.attrs.mode, flags));
  const bool write_behind = iorelay::client::TakesWriteBehind(cl->config(), flags, f->st_mode);
  const bool read_ahead = iorelay::client::TakesReadAhead(cl->config(), flags, f->st_mode);
  if (write_behind || read_ahead) {
    f->buffers = std::make_unique<iorelay::client::FileBuffers>();
    f->buffers->write_behind = write_behind;
    f->buffers->read_ahead = read_ahead;
  }
  cl->Register(f);
  *out = f;
  return 0;
}

int iorelay_close(iorelay_file* f) {
  if (!f) return -EBADF;
  Client* c = f->client;
  // The last close reports a write-behind error not yet reported (as NFS's close does).
  const bool last = f->refs.load() == 1;
  int rc = last ? iorelay::client::FlushAndTakeError(f) : iorelay::client::FlushWrites(f);
  if (int lr = c->ReleaseLocks(f); rc == 0) rc = lr;
  if (f->refs.fetch_sub(1) > 1) return rc;
  c->Unregister(f);
  if (int fd = f->direct_fd.load(); fd >= 0) {
    iorelay::client::CloseInternalFd(fd);
  } else if (f->changes.load() == f->synced_changes.load()) {
    // Nothing written since the last fsync: no write-back error can be pending, so the reply
    // is not awaited (the connection drops it when it comes).
    const std::vector<uint8_t> fields = proto::EncodeFields(proto::HandleRequest{f->handle});
    Outcome r = c->Post(f->server,
                        {.op = proto::Op::kClose, .fields = fields, .generation = f->generation});
    if (rc == 0) rc = r.NegErrno();
  } else {
    Result<long> r = StatusOnly(c->CallMsg<proto::HandleRequest, proto::Empty>(
        f->server, proto::Op::kClose, proto::HandleRequest{f->handle}, nullptr, f->generation));
    int close_rc = r.ok() ? static_cast<int>(*r) : -r.status().code();
    if (rc == 0) rc = close_rc;
  }
  delete f;
  return rc;
}

off_t iorelay_lseek(iorelay_file* f, off_t offset, int whence) {
  if (!f) return -EBADF;
  iorelay::MutexLock l(f->offset_mu);
  if (f->local_offset.load() && (whence == SEEK_SET || whence == SEEK_CUR)) {
    int64_t to = offset;
    if (whence == SEEK_CUR && __builtin_add_overflow(f->offset.load(), offset, &to)) {
      return -EOVERFLOW;
    }
    if (to < 0) return -EINVAL;
    f->offset.store(to);
    return static_cast<off_t>(to);
  }
  // SEEK_END, SEEK_DATA, SEEK_HOLE (and every seek while the daemon holds the offset) ask the
  // daemon; the daemon's handle moves too, which nothing reads while the client holds it.
  if (int rc = iorelay::client::FlushWrites(f); rc < 0) return rc;
  return FileOp(
      f,
      [&]() -> Result<long> {
        proto::OffsetReply rep;
        iorelay::client::Outcome r =
            f->client->CallMsg(f->server, proto::Op::kLseek,
                               proto::LseekRequest{f->handle, offset, whence}, &rep, f->generation);
        if (!r.ok()) return StatusOnly(r);
        iorelay::client::NoteDaemonOffset(f, rep);
        return static_cast<long>(rep.offset);
      },
      [&](int fd) {
        long r = Sys(syscall(SYS_lseek, fd, offset, whence));
        if (r >= 0) f->offset.store(r);
        return r;
      });
}

int iorelay_fsync(iorelay_file* f, int datasync) {
  if (!f) return -EBADF;
  const uint64_t covered = f->changes.load();  // changes made before this fsync started
  // Unsent writes go first; a write-behind error is reported here once (as by Linux's fsync).
  if (int rc = iorelay::client::FlushAndTakeError(f); rc < 0) return rc;
  long r = FileOp(
      f,
      [&] {
        return StatusOnly(f->client->CallMsg<proto::FsyncRequest, proto::Empty>(
            f->server, proto::Op::kFsync,
            proto::FsyncRequest{f->handle, static_cast<uint32_t>(datasync ? 1 : 0)}, nullptr,
            f->generation));
      },
      [&](int fd) { return Sys(syscall(datasync ? SYS_fdatasync : SYS_fsync, fd)); });
  if (r == 0) f->synced_changes.store(covered);
  return static_cast<int>(r);
}

int iorelay_ftruncate(iorelay_file* f, off_t length) {
  if (!f) return -EBADF;
  if (int rc = iorelay::client::FlushWrites(f); rc < 0) return rc;
  iorelay::client::NoteChange(f);
  return static_cast<int>(FileOp(
      f,
      [&] {
        return StatusOnly(f->client->CallMsg<proto::FtruncateRequest, proto::Empty>(
            f->server, proto::Op::kFtruncate, proto::FtruncateRequest{f->handle, length}, nullptr,
            f->generation));
      },
      [&](int fd) { return Sys(syscall(SYS_ftruncate, fd, length)); }));
}

int iorelay_fallocate(iorelay_file* f, int mode, off_t offset, off_t length) {
  if (!f) return -EBADF;
  if (int rc = iorelay::client::FlushWrites(f); rc < 0) return rc;
  iorelay::client::NoteChange(f);
  return static_cast<int>(FileOp(
      f,
      [&] {
        return StatusOnly(f->client->CallMsg<proto::FallocateRequest, proto::Empty>(
            f->server, proto::Op::kFallocate,
            proto::FallocateRequest{f->handle, mode, offset, length}, nullptr, f->generation));
      },
      [&](int fd) { return Sys(syscall(SYS_fallocate, fd, mode, offset, length)); }));
}

int iorelay_fstat(iorelay_file* f, struct stat* st) {
  if (!st) return -EFAULT;
  if (f && f->attrs_fresh.load() && f->client->changes() == f->opened_changes &&
      iorelay::client::MonotonicNs() - f->opened_ns < f->client->listed_attrs().valid_ns()) {
    proto::ToStat(f->open_attrs, st);  // the open's attributes, still current
    return 0;
  }
  if (int rc = iorelay::client::FlushWrites(f); rc < 0) return rc;  // the size includes them
  return static_cast<int>(FileOp(
      f,
      [&]() -> Result<long> {
        proto::WireStat w;
        iorelay::client::Outcome r = f->client->CallMsg(
            f->server, proto::Op::kFstat, proto::HandleRequest{f->handle}, &w, f->generation);
        if (r.ok()) proto::ToStat(w, st);
        return StatusOnly(r);
      },
      [&](int fd) { return Sys(syscall(SYS_fstat, fd, st)); }));
}

int iorelay_fchmod(iorelay_file* f, mode_t mode) {
  if (!f) return -EBADF;
  if (int rc = iorelay::client::FlushWrites(f); rc < 0) return rc;
  iorelay::client::NoteChange(f);
  return static_cast<int>(FileOp(
      f,
      [&] {
        return StatusOnly(f->client->CallMsg<proto::FchmodRequest, proto::Empty>(
            f->server, proto::Op::kFchmod,
            proto::FchmodRequest{f->handle, static_cast<uint32_t>(mode)}, nullptr, f->generation));
      },
      [&](int fd) { return Sys(syscall(SYS_fchmod, fd, mode)); }));
}

int iorelay_futimens(iorelay_file* f, const struct timespec times[2]) {
  if (!f) return -EBADF;
  if (int rc = iorelay::client::FlushWrites(f); rc < 0) return rc;
  iorelay::client::NoteChange(f);
  const proto::WireTimes wire = proto::ToWireTimes(times);
  return static_cast<int>(FileOp(
      f,
      [&] {
        return StatusOnly(f->client->CallMsg<proto::FutimensRequest, proto::Empty>(
            f->server, proto::Op::kFutimens, proto::FutimensRequest{f->handle, wire}, nullptr,
            f->generation));
      },
      [&](int fd) { return Sys(syscall(SYS_utimensat, fd, nullptr, times, 0)); }));
}

int iorelay_fstatfs(iorelay_file* f, struct statfs* st) {
  if (!st) return -EFAULT;
  return static_cast<int>(FileOp(
      f,
      [&]() -> Result<long> {
        proto::WireStatfs w;
        iorelay::client::Outcome r = f->client->CallMsg(
            f->server, proto::Op::kFstatfs, proto::HandleRequest{f->handle}, &w, f->generation);
        if (r.ok()) proto::ToStatfs(w, st);
        return StatusOnly(r);
      },
      [&](int fd) { return Sys(syscall(SYS_fstatfs, fd, st)); }));
}

int iorelay_getfl(iorelay_file* f) {
  if (!f) return -EBADF;
  return f->status_flags.load();
}

int iorelay_setfl(iorelay_file* f, int flags) {
  if (!f) return -EBADF;
  if (int rc = iorelay::client::FlushWrites(f); rc < 0) return rc;  // O_APPEND, O_DIRECT: now
  if (flags & O_APPEND) {  // appends are placed by the daemon, which must hold the offset
    iorelay::MutexLock l(f->offset_mu);
    if (int rc = iorelay::client::HandOffsetToDaemon(f); rc < 0) return rc;
  }
  long r = FileOp(
      f,
      [&] {
        return StatusOnly(f->client->CallMsg<proto::SetflRequest, proto::Empty>(
            f->server, proto::Op::kSetfl, proto::SetflRequest{f->handle, flags}, nullptr,
            f->generation));
      },
      [&](int fd) { return Sys(syscall(SYS_fcntl, fd, F_SETFL, flags)); });
  if (r == 0) {
    int old = f->status_flags.load();
    f->status_flags.store((old & ~kSettableFlags) | (flags & kSettableFlags));
  }
  return static_cast<int>(r);
}

const char* iorelay_file_path(const iorelay_file* f) { return f ? f->path.c_str() : nullptr; }

iorelay_file* iorelay_file_ref(iorelay_file* f) {
  if (f) f->refs.fetch_add(1);
  return f;
}

}  // extern "C"
