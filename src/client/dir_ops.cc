// Directory listings, fetched a page at a time (kReaddir with a cookie): the first page at
// open, the next one when the entries of the current one are used up, so a listing costs one
// page of memory however large the directory. A position is the page's ordinal and the index
// in it; the cookie each page starts at is kept (a few bytes a page) so a seek fetches that
// page again.
#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

#include "client/client.h"

namespace proto = iorelay::proto;

struct iorelay_dir {
  iorelay::client::Client* client = nullptr;
  std::string path;
  std::vector<uint64_t> page_cookies{0};  // where each page seen so far starts
  size_t page = 0;                        // ordinal of the current page
  bool loaded = false;                    // entries hold page `page`
  std::vector<proto::DirEntry> entries;   // the current page, when loaded
  size_t next = 0;                        // index in the page of the next entry
  uint64_t next_cookie = 0;               // where the page after this one starts
  bool last_page = false;                 // no entry after this page
  iorelay_dirent view{};                  // the entry last returned (points into entries)
};

namespace {

constexpr int kIndexBits = 32;
constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;

// Fetches page d->page (its cookie known). 0 or -errno.
int FetchPage(iorelay_dir* d) {
  proto::ReaddirReply rep;
  iorelay::client::Client* cl = d->client;
  const proto::ReaddirRequest req{d->path, d->page_cookies[d->page]};
  iorelay::client::Outcome r = cl->CallMsg(cl->ServerFor(d->path), proto::Op::kReaddir, req, &rep);
  if (!r.ok()) return r.NegErrno();
  // Each entry's attributes answer this process's stat of it for a while (listed_attrs.h).
  std::string_view dir = d->path;
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  cl->listed_attrs().PutPage(dir, rep.entries, iorelay::client::MonotonicNs(), cl->changes());
  d->entries = std::move(rep.entries);
  d->loaded = true;
  d->next_cookie = rep.next_cookie;
  // An empty page ends the listing too, so a daemon that never says done cannot loop us.
  d->last_page = rep.done != 0 || d->entries.empty();
  return 0;
}

// The page after the current one becomes current (not yet fetched).
void AdvancePage(iorelay_dir* d) {
  ++d->page;
  if (d->page == d->page_cookies.size()) {
    d->page_cookies.push_back(d->next_cookie);
  } else {
    d->page_cookies[d->page] = d->next_cookie;  // as the directory is now
  }
  d->loaded = false;
  d->next = 0;
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

int iorelay_readdir_next(iorelay_dir* d, const iorelay_dirent** entry) {
  if (!d || !entry) return -EFAULT;
  for (;;) {
    if (!d->loaded) {
      if (int rc = FetchPage(d); rc < 0) return rc;
    }
    if (d->next < d->entries.size()) break;
    if (d->last_page) return 0;
    AdvancePage(d);
  }
  const proto::DirEntry& e = d->entries[d->next++];
  d->view = {e.ino, e.type, e.name.c_str()};
  *entry = &d->view;
  return 1;
}

const iorelay_dirent* iorelay_readdir(iorelay_dir* d) {
  const int saved = errno;  // the calls under a page fetch may leave theirs
  const iorelay_dirent* entry = nullptr;
  const int rc = iorelay_readdir_next(d, &entry);
  errno = rc < 0 ? -rc : saved;
  return rc > 0 ? entry : nullptr;
}

uint64_t iorelay_telldir(const iorelay_dir* d) {
  return d == nullptr ? 0 : (uint64_t{d->page} << kIndexBits) | d->next;
}

void iorelay_seekdir(iorelay_dir* d, uint64_t pos) {
  const uint64_t page = pos >> kIndexBits;
  if (d == nullptr || page >= d->page_cookies.size()) return;  // not a position of this listing
  if (page != d->page) {
    d->page = page;
    d->loaded = false;
  }
  d->next = pos & kIndexMask;
}

void iorelay_rewinddir(iorelay_dir* d) {
  if (d == nullptr) return;
  d->page = 0;
  d->loaded = false;  // the next read lists the directory as it is then
  d->next = 0;
}

void iorelay_closedir(iorelay_dir* d) { delete d; }

}  // extern "C"
