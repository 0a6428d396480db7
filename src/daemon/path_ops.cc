// Requests naming paths: each is mapped through the exports and resolved beneath the
// export root by the backend (stat, statfs, access, unlink, mkdir, rmdir, rename, truncate,
// chmod, utimens, symlink, link, readlink, readdir).
#include <fcntl.h>

#include "daemon/mode_policy.h"
#include "daemon/op_handlers.h"
#include "proto/stat_convert.h"

namespace iorelay::daemon {

Answer<proto::WireStat> HandleStat(Core& core, Session& s, const proto::StatRequest& q) {
  Result<Mapped> m = s.Map(q.path);
  if (!m.ok()) return Error(m.status());
  Result<struct stat> st = core.backend->Stat(m->root_fd, m->rel, q.nofollow != 0);
  if (!st.ok()) return Error(st.status());
  return proto::ToWire(*st);
}

Answer<proto::WireStatfs> HandleStatfs(Core& core, Session& s, const proto::PathRequest& q) {
  Result<Mapped> m = s.Map(q.path);
  if (!m.ok()) return Error(m.status());
  Result<struct statfs> st = core.backend->Statfs(m->root_fd, m->rel);
  if (!st.ok()) return Error(st.status());
  return proto::ToWire(*st);
}

Answer<proto::Empty> HandleAccess(Core& core, Session& s, const proto::AccessRequest& q) {
  Result<Mapped> m = s.Map(q.path);
  if (!m.ok()) return Error(m.status());
  return Done(core.backend->Access(m->root_fd, m->rel, q.mode));
}

Answer<proto::Empty> HandleUnlink(Core& core, Session& s, const proto::PathRequest& q) {
  Result<Mapped> m = s.Map(q.path);
  if (!m.ok()) return Error(m.status());
  return Done(core.backend->Unlink(m->root_fd, m->rel));
}

Answer<proto::Empty> HandleMkdir(Core& core, Session& s, const proto::MkdirRequest& q) {
  Result<Mapped> m = s.Map(q.path);
  if (!m.ok()) return Error(m.status());
  return Done(core.backend->Mkdir(m->root_fd, m->rel, ClientMode(q.mode, core.config.allow_setid)));
}

Answer<proto::Empty> HandleRmdir(Core& core, Session& s, const proto::PathRequest& q) {
  Result<Mapped> m = s.Map(q.path);
  if (!m.ok()) return Error(m.status());
  return Done(core.backend->Rmdir(m->root_fd, m->rel));
}

Answer<proto::Empty> HandleRename(Core& core, Session& s, const proto::RenameRequest& q) {
  Result<Mapped> from = s.Map(q.from);
  if (!from.ok()) return Error(from.status());
  Result<Mapped> to = s.Map(q.to);
  if (!to.ok()) return Error(to.status());
  return Done(core.backend->Rename(from->root_fd, from->rel, to->root_fd, to->rel, q.flags));
}

Answer<proto::Empty> HandleTruncate(Core& core, Session& s, const proto::TruncateRequest& q) {
  Result<Mapped> m = s.Map(q.path);
  if (!m.ok()) return Error(m.status());
  return Done(core.backend->Truncate(m->root_fd, m->rel, q.length));
}

Answer<proto::Empty> HandleChmod(Core& core, Session& s, const proto::ChmodRequest& q) {
  Result<Mapped> m = s.Map(q.path);
  if (!m.ok()) return Error(m.status());
  return Done(core.backend->Chmod(m->root_fd, m->rel, ClientMode(q.mode, core.config.allow_setid)));
}

Answer<proto::Empty> HandleUtimens(Core& core, Session& s, const proto::UtimensRequest& q) {
  Result<Mapped> m = s.Map(q.path);
  if (!m.ok()) return Error(m.status());
  return Done(
      core.backend->Utimens(m->root_fd, m->rel, proto::FromWire(q.times).ts, q.nofollow != 0));
}

Answer<proto::Empty> HandleSymlink(Core& core, Session& s, const proto::SymlinkRequest& q) {
  Result<Mapped> m = s.Map(q.path);
  if (!m.ok()) return Error(m.status());
  return Done(core.backend->Symlink(q.target, m->root_fd, m->rel));
}

Answer<proto::Empty> HandleLink(Core& core, Session& s, const proto::LinkRequest& q) {
  Result<Mapped> from = s.Map(q.from);
  if (!from.ok()) return Error(from.status());
  Result<Mapped> to = s.Map(q.to);
  if (!to.ok()) return Error(to.status());
  return Done(core.backend->Link(from->root_fd, from->rel, to->root_fd, to->rel, q.follow != 0));
}

// The link's target follows the (empty) fields.
Answer<proto::Empty> HandleReadlink(Core& core, Session& s, const proto::PathRequest& q) {
  Result<Mapped> m = s.Map(q.path);
  if (!m.ok()) return Error(m.status());
  Result<std::string> target = core.backend->Readlink(m->root_fd, m->rel);
  if (!target.ok()) return Error(target.status());
  return {proto::Empty{}, 0, std::move(*target)};
}

// One page of the listing, each entry with its attributes: the directory is opened per page, so
// no state stays between pages.
Answer<proto::ReaddirReply> HandleReaddir(Core& core, Session& s, const proto::ReaddirRequest& q) {
  Result<Mapped> m = s.Map(q.path);
  if (!m.ok()) return Error(m.status());
  backend::Backend& b = *core.backend;
  Result<int> fd = b.Open(m->root_fd, m->rel, O_RDONLY | O_DIRECTORY, 0);
  if (!fd.ok()) return Error(fd.status());
  Result<backend::DirPage> page = b.ReadDir(*fd, q.cookie, proto::kReaddirPageEntries);
  if (!page.ok()) {
    (void)b.Close(*fd);
    return Error(page.status());
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
        entry.attrs = proto::ToWire(*st);
      }
    }
    reply.entries.push_back(std::move(entry));
  }
  (void)b.Close(*fd);
  reply.next_cookie = page->next_cookie;
  reply.done = page->done ? 1 : 0;
  return reply;
}

}  // namespace iorelay::daemon
