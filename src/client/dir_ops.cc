// Directory listings: fetched whole at open (one kReaddir), then iterated locally.
#include <vector>

#include "client/client.h"

namespace proto = iorelay::proto;

struct iorelay_dir {
  std::vector<proto::DirEntry> entries;
  std::vector<iorelay_dirent> view;  // points into entries' names
  size_t next = 0;
};

extern "C" {

int iorelay_opendir(iorelay_client* c, const char* path, iorelay_dir** out) {
  if (!c || !path || !out) return -EFAULT;
  if (path[0] != '/') return -EINVAL;
  iorelay::client::Client* cl = c->impl.get();
  proto::ReaddirReply rep;
  iorelay::client::Outcome r =
      cl->CallMsg(cl->ServerFor(path), proto::Op::kReaddir, proto::PathRequest{path}, &rep);
  if (!r.ok()) return r.NegErrno();
  auto* d = new iorelay_dir;
  d->entries = std::move(rep.entries);
  d->view.reserve(d->entries.size());
  for (const proto::DirEntry& e : d->entries) d->view.push_back({e.ino, e.type, e.name.c_str()});
  *out = d;
  return 0;
}

const iorelay_dirent* iorelay_readdir(iorelay_dir* d) {
  if (!d || d->next >= d->view.size()) return nullptr;
  return &d->view[d->next++];
}

void iorelay_closedir(iorelay_dir* d) { delete d; }

}  // extern "C"
