// Requests naming paths: each is mapped through the exports and resolved beneath the
// export root by the backend (stat, statfs, access, unlink, mkdir, rmdir, rename, truncate,
// chmod, utimens, symlink, link, readlink, readdir).
#include <fcntl.h>

#include "daemon/core.h"
#include "daemon/mode_policy.h"
#include "daemon/replier.h"
#include "daemon/stat_convert.h"

namespace iorelay::daemon {
namespace {

using proto::Op;

// One page of the listing, each entry with its attributes: the directory is opened per page, so
// no state stays between pages.
void Readdir(Core& core, const Mapped& m, uint64_t cookie, Replier& r) {
  backend::Backend& b = *core.backend;
  Result<int> fd = b.Open(m.root_fd, m.rel, O_RDONLY | O_DIRECTORY, 0);
  if (!fd.ok()) return r.Error(fd.status().code());
  Result<backend::DirPage> page = b.ReadDir(*fd, cookie, proto::kReaddirPageEntries);
  if (!page.ok()) {
    (void)b.Close(*fd);
    return r.Error(page.status().code());
  }
  proto::ReaddirReply reply;
  reply.entries.reserve(page->entries.size());
  for (auto& e : page->entries) {
    proto::DirEntry entry{e.ino, e.type, std::move(e.name)};
    // ".." is the parent's (above an export root, nothing of the client's).
    if (entry.name != "..") {
      std::optional<struct stat> st = e.attrs;
      if (!st) {
        if (Result<struct stat> r = b.StatEntry(*fd, entry.name); r.ok()) st = *r;
      }
      if (st) {
        entry.has_attrs = 1;
        entry.attrs = ToWire(*st);
      }
    }
    reply.entries.push_back(std::move(entry));
  }
  (void)b.Close(*fd);
  reply.next_cookie = page->next_cookie;
  reply.done = page->done ? 1 : 0;
  r.Ok(reply);
}

}  // namespace

void HandlePathOp(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
                  std::span<const uint8_t> payload, int64_t arrival_ns) {
  Replier r(core, conn, h, arrival_ns);
  backend::Backend& b = *core.backend;
  auto map = [&](const std::string& path, Mapped* out) {
    Result<Mapped> m = core.exports.Map(path);
    if (!m.ok()) {
      r.Error(m.status().code());
      return false;
    }
    *out = std::move(*m);
    return true;
  };
  Mapped m;
  switch (static_cast<Op>(h.op)) {
    case Op::kStat: {
      proto::StatRequest q;
      if (!Decode(payload, &q, r) || !map(q.path, &m)) return;
      Result<struct stat> st = b.Stat(m.root_fd, m.rel, q.nofollow != 0);
      st.ok() ? r.Ok(ToWire(*st)) : r.Error(st.status().code());
      return;
    }
    case Op::kStatfs: {
      proto::PathRequest q;
      if (!Decode(payload, &q, r) || !map(q.path, &m)) return;
      Result<struct statfs> st = b.Statfs(m.root_fd, m.rel);
      st.ok() ? r.Ok(ToWire(*st)) : r.Error(st.status().code());
      return;
    }
    case Op::kAccess: {
      proto::AccessRequest q;
      if (!Decode(payload, &q, r) || !map(q.path, &m)) return;
      return r.Done(b.Access(m.root_fd, m.rel, q.mode), 0);
    }
    case Op::kUnlink: {
      proto::PathRequest q;
      if (!Decode(payload, &q, r) || !map(q.path, &m)) return;
      return r.Done(b.Unlink(m.root_fd, m.rel), 0);
    }
    case Op::kMkdir: {
      proto::MkdirRequest q;
      if (!Decode(payload, &q, r) || !map(q.path, &m)) return;
      return r.Done(b.Mkdir(m.root_fd, m.rel, ClientMode(q.mode, core.config.allow_setid)), 0);
    }
    case Op::kRmdir: {
      proto::PathRequest q;
      if (!Decode(payload, &q, r) || !map(q.path, &m)) return;
      return r.Done(b.Rmdir(m.root_fd, m.rel), 0);
    }
    case Op::kRename: {
      proto::RenameRequest q;
      Mapped to;
      if (!Decode(payload, &q, r) || !map(q.from, &m) || !map(q.to, &to)) return;
      return r.Done(b.Rename(m.root_fd, m.rel, to.root_fd, to.rel, q.flags), 0);
    }
    case Op::kTruncate: {
      proto::TruncateRequest q;
      if (!Decode(payload, &q, r) || !map(q.path, &m)) return;
      return r.Done(b.Truncate(m.root_fd, m.rel, q.length), 0);
    }
    case Op::kChmod: {
      proto::ChmodRequest q;
      if (!Decode(payload, &q, r) || !map(q.path, &m)) return;
      return r.Done(b.Chmod(m.root_fd, m.rel, ClientMode(q.mode, core.config.allow_setid)), 0);
    }
    case Op::kUtimens: {
      proto::UtimensRequest q;
      if (!Decode(payload, &q, r) || !map(q.path, &m)) return;
      return r.Done(b.Utimens(m.root_fd, m.rel, FromWire(q.times).ts, q.nofollow != 0), 0);
    }
    case Op::kSymlink: {
      proto::SymlinkRequest q;
      if (!Decode(payload, &q, r) || !map(q.path, &m)) return;
      return r.Done(b.Symlink(q.target, m.root_fd, m.rel), 0);
    }
    case Op::kLink: {
      proto::LinkRequest q;
      Mapped to;
      if (!Decode(payload, &q, r) || !map(q.from, &m) || !map(q.to, &to)) return;
      return r.Done(b.Link(m.root_fd, m.rel, to.root_fd, to.rel, q.follow != 0), 0);
    }
    case Op::kReadlink: {
      proto::PathRequest q;
      if (!Decode(payload, &q, r) || !map(q.path, &m)) return;
      Result<std::string> target = b.Readlink(m.root_fd, m.rel);
      if (!target.ok()) return r.Error(target.status().code());
      r.Ok(proto::Empty{}, 0, {reinterpret_cast<const uint8_t*>(target->data()), target->size()});
      return;
    }
    case Op::kReaddir: {
      proto::ReaddirRequest q;
      if (!Decode(payload, &q, r) || !map(q.path, &m)) return;
      return Readdir(core, m, q.cookie, r);
    }
    default:
      r.Error(EINVAL);
  }
}

}  // namespace iorelay::daemon
