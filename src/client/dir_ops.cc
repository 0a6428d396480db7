// Directory listings, fetched a page at a time (kReaddir with a cookie): the first page at
// open, the next one when the entries of the current one are used up.
#include <cerrno>
#include <string>
#include <vector>

#include "client/client.h"

namespace proto = iorelay::proto;

struct iorelay_dir {
  iorelay::client::Client* client = nullptr;
  std::string path;
  std::vector<proto::DirEntry> entries;  // the current page
  iorelay_dirent view{};                 // the entry last returned (points into entries)
  size_t next = 0;
  uint64_t next_cookie = 0;
  bool done = false;
};

namespace {

// Fetches the page that starts at d->next_cookie. 0 or -errno.
int FetchPage(iorelay_dir* d) {
  proto::ReaddirReply rep;
  iorelay::client::Client* cl = d->client;
  iorelay::client::Outcome r = cl->CallMsg(cl->ServerFor(d->path), proto::Op::kReaddir,
                                           proto::ReaddirRequest{d->path, d->next_cookie}, &rep);
  if (!r.ok()) return r.NegErrno();
  // Each entry's attributes answer this process's stat of it for a while (listed_attrs.h).
  const int64_t now = iorelay::client::MonotonicNs();
  const uint64_t changes = cl->changes();
  std::string base = d->path;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (base != "/") base += '/';
  for (const proto::DirEntry& e : rep.entries) {
    if (e.has_attrs != 0 && e.name != "." && e.name != "..") {
      cl->listed_attrs().Put(base + e.name, e.attrs, now, changes);
    }
  }
  d->entries = std::move(rep.entries);
  d->next = 0;
  d->next_cookie = rep.next_cookie;
  d->done = rep.done != 0 || d->entries.empty();
  return 0;
}

}  // namespace

extern "C" {

int iorelay_opendir(iorelay_client* c, const char* path, iorelay_dir** out) {
  if (!c || !path || !out) return -EFAULT;
  if (path[0] != '/') return -EINVAL;
  auto* d = new iorelay_dir;
  d->client = c->impl.get();
  d->path = path;
  if (int rc = FetchPage(d); rc < 0) {
    delete d;
    return rc;
  }
  *out = d;
  return 0;
}

const iorelay_dirent* iorelay_readdir(iorelay_dir* d) {
  if (!d) return nullptr;
  while (d->next >= d->entries.size()) {
    if (d->done) return nullptr;
    if (int rc = FetchPage(d); rc < 0) {
      errno = -rc;
      return nullptr;
    }
  }
  const proto::DirEntry& e = d->entries[d->next++];
  d->view = {e.ino, e.type, e.name.c_str()};
  return &d->view;
}

void iorelay_closedir(iorelay_dir* d) { delete d; }

}  // extern "C"
