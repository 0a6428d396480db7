// The MayFreeData of the ops that may free data: one look at the file before a loop runs them.
#include "daemon/frees_data.h"

#include <fcntl.h>
#include <sys/stat.h>

namespace iorelay::daemon {
namespace {

using proto::Op;

bool Large(const struct stat& st) {
  return S_ISREG(st.st_mode) && st.st_blocks * 512 > kLoopFreeBytes;
}

// `last_name`: the request removes a name, which frees the data only if it is the last one.
bool PathFreesData(Core& core, const Session& s, const std::string& path, bool follow,
                   bool last_name) {
  Result<Mapped> m = s.Map(path);
  if (!m.ok()) return false;
  Result<struct stat> st = core.backend->Stat(m->root_fd, m->rel, /*nofollow=*/!follow);
  return st.ok() && Large(*st) && (!last_name || st->st_nlink <= 1);
}

}  // namespace

template <>
bool MayFreeData<Op::kUnlink>(Core& core, Session& s, const proto::PathRequest& q) {
  return PathFreesData(core, s, q.path, false, true);
}

template <>
bool MayFreeData<Op::kRename>(Core& core, Session& s, const proto::RenameRequest& q) {
  return PathFreesData(core, s, q.to, false, true);
}

template <>
bool MayFreeData<Op::kOpen>(Core& core, Session& s, const proto::OpenRequest& q) {
  return (q.flags & O_TRUNC) != 0 &&
         PathFreesData(core, s, q.path, (q.flags & O_NOFOLLOW) == 0, false);
}

template <>
bool MayFreeData<Op::kClose>(Core& core, Session& session, const proto::HandleRequest& q) {
  std::shared_ptr<OpenFile> f = session.Find(q.handle);
  if (f == nullptr) return false;
  Result<struct stat> st = core.backend->Fstat(f->fd());
  return st.ok() && st->st_nlink == 0 && Large(*st);
}

}  // namespace iorelay::daemon
