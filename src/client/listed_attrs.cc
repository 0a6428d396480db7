// ListedAttrs: one map under a mutex; stale entries are skipped, not swept (a new listing of
// the same directory overwrites them, and a full map starts over).
#include "client/listed_attrs.h"

#include <sys/stat.h>

#include "client/client.h"

namespace iorelay::client {

void ListedAttrs::Put(std::string path, const proto::WireStat& attrs, int64_t now_ns,
                      uint64_t changes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.size() >= kMaxEntries) entries_.clear();
  entries_[std::move(path)] = Entry{attrs, now_ns, changes};
}

std::optional<proto::WireStat> ListedAttrs::Get(std::string_view path, bool nofollow,
                                                int64_t now_ns, uint64_t changes) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(std::string(path));
  if (it == entries_.end()) return std::nullopt;
  const Entry& e = it->second;
  if (e.changes != changes || now_ns - e.listed_ns >= kOpenAttrsValidNs) return std::nullopt;
  if (!nofollow && S_ISLNK(e.attrs.mode)) return std::nullopt;  // the target's are wanted
  return e.attrs;
}

}  // namespace iorelay::client
