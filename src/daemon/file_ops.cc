// Requests on a session or on an open handle that bypass the scheduler: open, close, lseek,
// fsync, ftruncate, fallocate, fstat, fchmod, futimens, fstatfs, setfl, adopt, expect_adopt,
// ping, stats.
#include <fcntl.h>
#include <unistd.h>

#include "daemon/mode_policy.h"
#include "daemon/op_handlers.h"
#include "proto/stat_convert.h"

namespace iorelay::daemon {
Answer<proto::Empty> HandlePing(Core&, Session&, const proto::Empty&) { return proto::Empty{}; }

Answer<proto::Empty> HandleStats(Core& core, Session& s, const proto::Empty&) {
  return {proto::Empty{}, 0, StatsJsonFor(core, s).dump()};
}

Answer<proto::OpenReply> HandleOpen(Core& core, Session& s, const proto::OpenRequest& m) {
  Result<Mapped> mapped = s.Map(m.path);
  if (!mapped.ok()) return Error(mapped.status());
  int flags = m.flags & ~O_CLOEXEC;
  // Clients' files leave the daemon a reserve of descriptors (fd_budget.h): past it, EMFILE
  // for this client, while connections and other sessions' opens still get theirs.
  if (!core.fds.Take()) return Error(EMFILE);
  Result<int> fd = core.backend->Open(mapped->root_fd, mapped->rel, flags,
                                      ClientMode(m.mode, core.config.allow_setid));
  int error = fd.ok() ? 0 : fd.status().code();
  if (fd.ok() && !core.fds.Fits(*fd)) {
    (void)core.backend->Close(*fd);
    error = EMFILE;
  }
  if (error != 0) {
    core.fds.Give();
    return Error(error);
  }
  Result<struct stat> st = core.backend->Fstat(*fd);
  if (!st.ok()) {
    (void)core.backend->Close(*fd);
    core.fds.Give();
    return Error(st.status());
  }
  sched::FileKey key{st->st_dev, st->st_ino};
  auto file = std::make_shared<OpenFile>(core.backend.get(), *fd, flags, key, st->st_mode);
  file->CountIn(&core.fds);
  uint64_t handle = core.sessions.NewHandleId();
  const uint64_t limit = core.fds.SessionLimit(static_cast<uint64_t>(core.config.max_open_files));
  if (!s.Insert(handle, std::move(file), static_cast<size_t>(limit))) {
    return Error(EMFILE);  // the file closes with its last reference, here
  }
  return {proto::OpenReply{handle, proto::ToWire(*st)}, handle};
}

Answer<proto::Empty> HandleClose(Core&, Session& s, const proto::HandleRequest& m) {
  std::shared_ptr<OpenFile> f = s.Take(m.handle);
  if (f == nullptr) return Error(EBADF, m.handle);
  // Only the last reference closes: no other session (fork, adopt), announced adoption
  // (Session::Offer) or request in flight holds the file (requests drop theirs before
  // their replies: TakeOutcome, Answer); none can take it once it left here.
  return Done(OpenFile::Release(std::move(f)), m.handle);
}

Answer<proto::OffsetReply> HandleLseek(Core& core, Session& s, const proto::LseekRequest& m) {
  std::shared_ptr<OpenFile> f = s.Find(m.handle);
  if (f == nullptr) return Error(EBADF, m.handle);
  MutexLock lock(f->pos_mu);
  int64_t base = 0;
  switch (m.whence) {
    case SEEK_SET:
      break;
    case SEEK_CUR:
      base = static_cast<int64_t>(f->pos.load());
      break;
    case SEEK_END: {
      Result<struct stat> st = core.backend->Fstat(f->fd());
      if (!st.ok()) return Error(st.status(), 0);
      base = st->st_size;
      break;
    }
    case SEEK_DATA:
    case SEEK_HOLE: {
      Result<int64_t> pos = core.backend->Seek(f->fd(), m.offset, m.whence);
      if (!pos.ok()) return Error(pos.status(), m.handle);
      f->pos.store(static_cast<uint64_t>(*pos));
      return {proto::OffsetReply{*pos, f->Sole()}, m.handle};
    }
    default:
      return Error(EINVAL, m.handle);
  }
  int64_t next = 0;
  if (__builtin_add_overflow(base, m.offset, &next)) return Error(EOVERFLOW, m.handle);
  if (next < 0) return Error(EINVAL, m.handle);
  f->pos.store(static_cast<uint64_t>(next));
  return {proto::OffsetReply{next, f->Sole()}, m.handle};
}

Answer<proto::Empty> HandleFsync(Core& core, Session& s, const proto::FsyncRequest& m) {
  std::shared_ptr<OpenFile> f = s.Find(m.handle);
  if (f == nullptr) return Error(EBADF, m.handle);
  return Done(core.backend->Fsync(f->fd(), m.datasync != 0), m.handle);
}

Answer<proto::Empty> HandleFtruncate(Core& core, Session& s, const proto::FtruncateRequest& m) {
  std::shared_ptr<OpenFile> f = s.Find(m.handle);
  if (f == nullptr) return Error(EBADF, m.handle);
  return Done(core.backend->Ftruncate(f->fd(), m.length), m.handle);
}

Answer<proto::Empty> HandleFallocate(Core& core, Session& s, const proto::FallocateRequest& m) {
  std::shared_ptr<OpenFile> f = s.Find(m.handle);
  if (f == nullptr) return Error(EBADF, m.handle);
  return Done(core.backend->Fallocate(f->fd(), m.mode, m.offset, m.length), m.handle);
}

Answer<proto::WireStat> HandleFstat(Core& core, Session& s, const proto::HandleRequest& m) {
  std::shared_ptr<OpenFile> f = s.Find(m.handle);
  if (f == nullptr) return Error(EBADF, m.handle);
  Result<struct stat> st = core.backend->Fstat(f->fd());
  if (!st.ok()) return Error(st.status(), m.handle);
  return {proto::ToWire(*st), m.handle};
}

Answer<proto::Empty> HandleFchmod(Core& core, Session& s, const proto::FchmodRequest& m) {
  std::shared_ptr<OpenFile> f = s.Find(m.handle);
  if (f == nullptr) return Error(EBADF, m.handle);
  return Done(core.backend->Fchmod(f->fd(), ClientMode(m.mode, core.config.allow_setid)), m.handle);
}

Answer<proto::Empty> HandleFutimens(Core& core, Session& s, const proto::FutimensRequest& m) {
  std::shared_ptr<OpenFile> f = s.Find(m.handle);
  if (f == nullptr) return Error(EBADF, m.handle);
  return Done(core.backend->Futimens(f->fd(), proto::FromWire(m.times).ts), m.handle);
}

Answer<proto::WireStatfs> HandleFstatfs(Core& core, Session& s, const proto::HandleRequest& m) {
  std::shared_ptr<OpenFile> f = s.Find(m.handle);
  if (f == nullptr) return Error(EBADF, m.handle);
  Result<struct statfs> st = core.backend->Fstatfs(f->fd());
  if (!st.ok()) return Error(st.status(), m.handle);
  return {proto::ToWire(*st), m.handle};
}

Answer<proto::Empty> HandleSetfl(Core& core, Session& s, const proto::SetflRequest& m) {
  std::shared_ptr<OpenFile> f = s.Find(m.handle);
  if (f == nullptr) return Error(EBADF, m.handle);
  constexpr int kChangeable = O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME | O_ASYNC;
  int next = (f->flags() & ~kChangeable) | (m.flags & kChangeable);
  Status st = core.backend->SetFlags(f->fd(), next);
  if (st.ok()) f->set_flags(next);
  return Done(st, m.handle);
}

Answer<proto::Empty> HandleAdopt(Core& core, Session& s, const proto::AdoptRequest& m) {
  std::shared_ptr<Session> parent = core.sessions.Find(m.parent_session, m.parent_token);
  if (parent == nullptr || parent->app_index() != s.app_index()) return Error(EACCES);
  bool all = true;
  for (uint64_t h : m.handles) {
    // (The parent's announcement, if any, is spent: it held the file in case the parent
    // closed its handle first.)
    std::shared_ptr<OpenFile> f = parent->TakeForAdopt(h);
    if (f == nullptr) {
      all = false;
      continue;
    }
    if (!s.Insert(h, f, static_cast<size_t>(core.config.max_open_files))) return Error(EMFILE);
  }
  if (!all) return Error(EBADF);
  return proto::Empty{};
}

Answer<proto::Empty> HandleExpectAdopt(Core&, Session& s, const proto::ExpectAdoptRequest& m) {
  std::vector<std::shared_ptr<OpenFile>> files;
  for (uint64_t h : m.handles) {
    std::shared_ptr<OpenFile> f = s.Find(h);
    if (f == nullptr) return Error(EBADF, h);
    files.push_back(std::move(f));
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (!s.Offer(m.handles[i], std::move(files[i]))) return Error(EMFILE, m.handles[i]);
  }
  return proto::Empty{};
}

}  // namespace iorelay::daemon
