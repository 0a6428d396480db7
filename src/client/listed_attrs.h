// The attributes that directory listings carried (each entry's lstat, read by the daemon as it
// listed the page), which answer this process's stat and lstat of those entries for a short
// while, as NFS's READDIRPLUS fills its attribute cache: a walk (find, du, ls -l, tar c) then
// costs a round trip per page, not per entry. An entry answers while the process has changed no
// file since the listing (Client::changes()) and for at most kOpenAttrsValidNs; a change by
// another process shows after at most that long, as for an open's attributes.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "proto/messages.h"
#include "proto/wire.h"

namespace iorelay::client {

class ListedAttrs {
 public:
  // Entries held at most; a listing beyond it starts over (the cache is a convenience). Each
  // costs about 240 bytes of the application's memory (7.5 MiB here), which bounds what a
  // listing of a huge directory adds to it; gnulib's fts (find, du, tar) stats a directory's
  // entries after reading them all, so a directory of more entries than this costs it a round
  // trip per entry past the first ones.
  static constexpr size_t kMaxEntries = 8 * proto::kReaddirPageEntries;

  // `path`: the entry's absolute path (the directory's, "/", its name).
  void Put(std::string path, const proto::WireStat& attrs, int64_t now_ns, uint64_t changes);
  // The attributes of `path` if a listing recorded them, they are fresh, and they answer the
  // call: lstat (nofollow) always, stat only when the entry is not a symbolic link.
  std::optional<proto::WireStat> Get(std::string_view path, bool nofollow, int64_t now_ns,
                                     uint64_t changes) const;

 private:
  struct Entry {
    proto::WireStat attrs;
    int64_t listed_ns = 0;
    uint64_t changes = 0;  // the client's changes() at the listing
  };
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace iorelay::client
