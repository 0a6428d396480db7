// MayFreeData: looks at the file a request would free before an event loop runs it.
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
bool PathFreesData(Core& core, const std::string& path, bool follow, bool last_name) {
  Result<Mapped> m = core.exports.Map(path);
  if (!m.ok()) return false;
  Result<struct stat> st = core.backend->Stat(m->root_fd, m->rel, /*nofollow=*/!follow);
  return st.ok() && Large(*st) && (!last_name || st->st_nlink <= 1);
}

template <class Msg>
bool Decoded(std::span<const uint8_t> payload, Msg* m) {
  return proto::DecodeFields(payload, m).ok();
}

}  // namespace

bool MayFreeData(Core& core, Session& session, Op op, std::span<const uint8_t> payload) {
  switch (op) {
    case Op::kUnlink: {
      proto::PathRequest q;
      return Decoded(payload, &q) && PathFreesData(core, q.path, false, true);
    }
    case Op::kRename: {
      proto::RenameRequest q;
      return Decoded(payload, &q) && PathFreesData(core, q.to, false, true);
    }
    case Op::kOpen: {
      proto::OpenRequest q;
      return Decoded(payload, &q) && (q.flags & O_TRUNC) != 0 &&
             PathFreesData(core, q.path, (q.flags & O_NOFOLLOW) == 0, false);
    }
    case Op::kClose: {
      proto::HandleRequest q;
      if (!Decoded(payload, &q)) return false;
      std::shared_ptr<OpenFile> f = session.Find(q.handle);
      if (f == nullptr) return false;
      Result<struct stat> st = core.backend->Fstat(f->fd());
      return st.ok() && st->st_nlink == 0 && Large(*st);
    }
    default:
      return false;
  }
}

}  // namespace iorelay::daemon
