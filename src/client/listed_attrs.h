// The attributes that directory listings carried (each entry's lstat, read by the daemon as it
// listed the page), which answer this process's stat and lstat of those entries for a short
// while, as NFS's READDIRPLUS fills its attribute cache: a walk (find, du, ls -l, tar c) then
// costs a round trip per page, not per entry. An entry answers while the process has changed no
// file since the listing (Client::changes()) and for at most kOpenAttrsValidNs; a change by
// another process shows after at most that long, as for an open's attributes. With stat
// prefetch on, a directory whose entries this process stats one by one is listed once (NFS's
// readdirplus heuristic), so that the stats that follow are answered here.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "proto/messages.h"

namespace iorelay::client {

class ListedAttrs {
 public:
  // The lifetime of what a listing (or an open) said: IORELAY_ATTR_CACHE_MS, as NFS's actimeo.
  void set_valid_ns(int64_t ns) { valid_ns_ = ns; }
  int64_t valid_ns() const { return valid_ns_; }
  // Stat misses in one directory, within a lifetime, after which stat prefetch lists it.
  static constexpr int kMissesBeforeListing = 8;

  // Entries held at most; the oldest pages go first. gnulib's fts (find, du, tar) stats a
  // directory's entries after reading them all, so this is the largest directory a walk finds
  // whole here. Each entry costs about 120 bytes of the application's memory (8 MiB in all).
  static constexpr size_t kMaxEntries = 1 << 16;

  // One page of the listing of `dir` (absolute; "/" or without a trailing slash): the entries
  // that carry attributes, but "." and "..".
  void PutPage(std::string_view dir, std::span<const proto::DirEntry> entries, int64_t now_ns,
               uint64_t changes);
  // The attributes of `path` (`dir`, "/", a name) if a listing recorded them, they are fresh,
  // and they answer the call: lstat (nofollow) always, stat only when the entry is not a
  // symbolic link.
  std::optional<proto::WireStat> Get(std::string_view path, bool nofollow, int64_t now_ns,
                                     uint64_t changes) const;
  // A stat of `path` missed: true when its directory has missed kMissesBeforeListing times
  // since its last listing or the lifetime began (then it counts again from 0), i.e. when
  // stat prefetch should list it now. Keeps at most kMaxMissDirs directories.
  bool NoteMiss(std::string_view path, int64_t now_ns);

 private:
  // A page's entries, by name for a binary search; no node or string per entry.
  struct Page {
    std::string dir;
    int64_t listed_ns = 0;
    uint64_t changes = 0;                // the client's changes() at the listing
    std::string names;                   // each name and a '\0'
    std::vector<uint32_t> name_starts;   // into names, in name order
    std::vector<proto::WireStat> attrs;  // in name_starts' order
  };
  mutable Mutex mu_;
  std::deque<Page> pages_ GUARDED_BY(mu_);   // oldest first
  uint64_t first_page_ GUARDED_BY(mu_) = 0;  // the number of pages_.front(), counting all
  // Each directory's pages in pages_, by number, oldest first.
  std::unordered_map<std::string, std::vector<uint64_t>> pages_of_dir_ GUARDED_BY(mu_);
  size_t entries_ GUARDED_BY(mu_) = 0;  // in pages_
  int64_t valid_ns_ = 1'000'000'000;
  // Per directory, the misses counted and when the count began.
  static constexpr size_t kMaxMissDirs = 1024;
  std::unordered_map<std::string, std::pair<int, int64_t>> misses_ GUARDED_BY(mu_);
};

}  // namespace iorelay::client
