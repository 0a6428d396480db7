// Requests on a session or on an open handle that bypass the scheduler: open, close, lseek,
// fsync, ftruncate, fallocate, fstat, fchmod, futimens, fstatfs, setfl, adopt, expect_adopt,
// ping, stats.
#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include "daemon/core.h"
#include "daemon/mode_policy.h"
#include "daemon/replier.h"
#include "daemon/stat_convert.h"

namespace iorelay::daemon {
namespace {

using proto::Op;

void Open(Core& core, Session& s, const proto::OpenRequest& m, Replier& r) {
  Result<Mapped> mapped = core.exports.Map(m.path);
  if (!mapped.ok()) return r.Error(mapped.status().code());
  int flags = m.flags & ~O_CLOEXEC;
  // Clients' files leave the daemon a reserve of descriptors (fd_budget.h): past it, EMFILE
  // for this client, while connections and other sessions' opens still get theirs.
  if (!core.fds.Take()) return r.Error(EMFILE);
  Result<int> fd = core.backend->Open(mapped->root_fd, mapped->rel, flags,
                                      ClientMode(m.mode, core.config.allow_setid));
  int error = fd.ok() ? 0 : fd.status().code();
  if (fd.ok() && !core.fds.Fits(*fd)) {
    (void)core.backend->Close(*fd);
    error = EMFILE;
  }
  if (error != 0) {
    core.fds.Give();
    return r.Error(error);
  }
  Result<struct stat> st = core.backend->Fstat(*fd);
  if (!st.ok()) {
    (void)core.backend->Close(*fd);
    core.fds.Give();
    return r.Error(st.status().code());
  }
  sched::FileKey key{st->st_dev, st->st_ino};
  auto file = std::make_shared<OpenFile>(core.backend.get(), *fd, flags, key, st->st_mode);
  file->CountIn(&core.fds);
  uint64_t handle = core.sessions.NewHandleId();
  const uint64_t limit = core.fds.SessionLimit(static_cast<uint64_t>(core.config.max_open_files));
  if (!s.Insert(handle, std::move(file), static_cast<size_t>(limit))) {
    return r.Error(EMFILE);  // the file closes with its last reference, here
  }
  r.Ok(proto::OpenReply{handle, ToWire(*st)}, handle);
}

void Lseek(Core& core, OpenFile& f, const proto::LseekRequest& m, Replier& r) {
  std::lock_guard<std::mutex> lock(f.pos_mu);
  int64_t base = 0;
  switch (m.whence) {
    case SEEK_SET:
      break;
    case SEEK_CUR:
      base = static_cast<int64_t>(f.pos.load());
      break;
    case SEEK_END: {
      Result<struct stat> st = core.backend->Fstat(f.fd());
      if (!st.ok()) return r.Error(st.status().code(), 0);
      base = st->st_size;
      break;
    }
    case SEEK_DATA:
    case SEEK_HOLE: {
      Result<int64_t> pos = core.backend->Seek(f.fd(), m.offset, m.whence);
      if (!pos.ok()) return r.Error(pos.status().code(), m.handle);
      f.pos.store(static_cast<uint64_t>(*pos));
      return r.Ok(proto::OffsetReply{*pos, f.Sole()}, m.handle);
    }
    default:
      return r.Error(EINVAL, m.handle);
  }
  int64_t next = 0;
  if (__builtin_add_overflow(base, m.offset, &next)) return r.Error(EOVERFLOW, m.handle);
  if (next < 0) return r.Error(EINVAL, m.handle);
  f.pos.store(static_cast<uint64_t>(next));
  r.Ok(proto::OffsetReply{next, f.Sole()}, m.handle);
}

void Setfl(Core& core, OpenFile& f, const proto::SetflRequest& m, Replier& r) {
  constexpr int kChangeable = O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME | O_ASYNC;
  int next = (f.flags() & ~kChangeable) | (m.flags & kChangeable);
  Status st = core.backend->SetFlags(f.fd(), next);
  if (st.ok()) f.set_flags(next);
  r.Done(st, m.handle);
}

void Adopt(Core& core, Session& s, const proto::AdoptRequest& m, Replier& r) {
  std::shared_ptr<Session> parent = core.sessions.Find(m.parent_session, m.parent_token);
  if (parent == nullptr || parent->app_index() != s.app_index()) return r.Error(EACCES);
  bool all = true;
  for (uint64_t h : m.handles) {
    // (The parent's announcement, if any, is spent: it held the file in case the parent
    // closed its handle first.)
    std::shared_ptr<OpenFile> f = parent->TakeForAdopt(h);
    if (f == nullptr) {
      all = false;
      continue;
    }
    if (!s.Insert(h, f, static_cast<size_t>(core.config.max_open_files))) return r.Error(EMFILE);
  }
  all ? r.Ok(proto::Empty{}) : r.Error(EBADF);
}

void ExpectAdopt(Session& s, const proto::ExpectAdoptRequest& m, Replier& r) {
  std::vector<std::shared_ptr<OpenFile>> files;
  for (uint64_t h : m.handles) {
    std::shared_ptr<OpenFile> f = s.Find(h);
    if (f == nullptr) return r.Error(EBADF, h);
    files.push_back(std::move(f));
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (!s.Offer(m.handles[i], std::move(files[i]))) return r.Error(EMFILE, m.handles[i]);
  }
  r.Ok(proto::Empty{});
}

// Ops naming a handle: find the description or answer EBADF.
std::shared_ptr<OpenFile> FindFile(Session& s, uint64_t handle, Replier& r) {
  std::shared_ptr<OpenFile> f = s.Find(handle);
  if (f == nullptr) r.Error(EBADF, handle);
  return f;
}

}  // namespace

void HandleFileOp(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
                  std::span<const uint8_t> payload, int64_t arrival_ns) {
  // Deferred: the reply goes when this returns, after the handle's reference is dropped.
  Replier r(core, conn, h, arrival_ns, /*deferred=*/true);
  Session& s = *conn->session;
  backend::Backend& b = *core.backend;
  switch (static_cast<Op>(h.op)) {
    case Op::kPing: {
      proto::Empty m;
      if (Decode(payload, &m, r)) r.Ok(m);
      return;
    }
    case Op::kStats: {
      proto::Empty m;
      if (!Decode(payload, &m, r)) return;
      std::string json = StatsJson(core).dump();
      r.Ok(m, 0, {reinterpret_cast<const uint8_t*>(json.data()), json.size()});
      return;
    }
    case Op::kAdopt: {
      proto::AdoptRequest m;
      if (Decode(payload, &m, r)) Adopt(core, s, m, r);
      return;
    }
    case Op::kExpectAdopt: {
      proto::ExpectAdoptRequest m;
      if (Decode(payload, &m, r)) ExpectAdopt(s, m, r);
      return;
    }
    case Op::kOpen: {
      proto::OpenRequest m;
      if (Decode(payload, &m, r)) Open(core, s, m, r);
      return;
    }
    case Op::kClose: {
      proto::HandleRequest m;
      if (!Decode(payload, &m, r)) return;
      std::shared_ptr<OpenFile> f = s.Take(m.handle);
      if (f == nullptr) return r.Error(EBADF, m.handle);
      // Only the last reference closes: no other session (fork, adopt), announced adoption
      // (Session::Offer) or request in flight holds the file (requests drop theirs before
      // their replies: TakeOutcome, the deferred Replier); none can take it once it left here.
      return r.Done(OpenFile::Release(std::move(f)), m.handle);
    }
    case Op::kLseek: {
      proto::LseekRequest m;
      if (!Decode(payload, &m, r)) return;
      if (auto f = FindFile(s, m.handle, r)) Lseek(core, *f, m, r);
      return;
    }
    case Op::kFsync: {
      proto::FsyncRequest m;
      if (!Decode(payload, &m, r)) return;
      if (auto f = FindFile(s, m.handle, r)) r.Done(b.Fsync(f->fd(), m.datasync != 0), m.handle);
      return;
    }
    case Op::kFtruncate: {
      proto::FtruncateRequest m;
      if (!Decode(payload, &m, r)) return;
      if (auto f = FindFile(s, m.handle, r)) r.Done(b.Ftruncate(f->fd(), m.length), m.handle);
      return;
    }
    case Op::kFallocate: {
      proto::FallocateRequest m;
      if (!Decode(payload, &m, r)) return;
      if (auto f = FindFile(s, m.handle, r)) {
        r.Done(b.Fallocate(f->fd(), m.mode, m.offset, m.length), m.handle);
      }
      return;
    }
    case Op::kFstat: {
      proto::HandleRequest m;
      if (!Decode(payload, &m, r)) return;
      if (auto f = FindFile(s, m.handle, r)) {
        Result<struct stat> st = b.Fstat(f->fd());
        st.ok() ? r.Ok(ToWire(*st), m.handle) : r.Error(st.status().code(), m.handle);
      }
      return;
    }
    case Op::kFchmod: {
      proto::FchmodRequest m;
      if (!Decode(payload, &m, r)) return;
      if (auto f = FindFile(s, m.handle, r)) {
        r.Done(b.Fchmod(f->fd(), ClientMode(m.mode, core.config.allow_setid)), m.handle);
      }
      return;
    }
    case Op::kFutimens: {
      proto::FutimensRequest m;
      if (!Decode(payload, &m, r)) return;
      if (auto f = FindFile(s, m.handle, r))
        r.Done(b.Futimens(f->fd(), FromWire(m.times).ts), m.handle);
      return;
    }
    case Op::kFstatfs: {
      proto::HandleRequest m;
      if (!Decode(payload, &m, r)) return;
      if (auto f = FindFile(s, m.handle, r)) {
        Result<struct statfs> st = b.Fstatfs(f->fd());
        st.ok() ? r.Ok(ToWire(*st), m.handle) : r.Error(st.status().code(), m.handle);
      }
      return;
    }
    case Op::kSetfl: {
      proto::SetflRequest m;
      if (!Decode(payload, &m, r)) return;
      if (auto f = FindFile(s, m.handle, r)) Setfl(core, *f, m, r);
      return;
    }
    default:
      r.Error(EINVAL);
  }
}

}  // namespace iorelay::daemon
