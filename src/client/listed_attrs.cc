// ListedAttrs: the pages under a mutex, newest last; stale pages are skipped, not swept (a new
// listing of the same directory comes after them, and the oldest go when the bound is reached).
#include "client/listed_attrs.h"

#include <sys/stat.h>

#include <algorithm>
#include <numeric>

#include "client/client.h"

namespace iorelay::client {

void ListedAttrs::PutPage(std::string_view dir, std::span<const proto::DirEntry> entries,
                          int64_t now_ns, uint64_t changes) {
  std::vector<const proto::DirEntry*> kept;
  for (const proto::DirEntry& e : entries) {
    if (e.has_attrs != 0 && e.name != "." && e.name != "..") kept.push_back(&e);
  }
  if (kept.empty() || kept.size() > kMaxEntries) return;
  std::sort(kept.begin(), kept.end(),
            [](const proto::DirEntry* a, const proto::DirEntry* b) { return a->name < b->name; });
  Page page{std::string(dir), now_ns, changes, {}, {}, {}};
  page.name_starts.reserve(kept.size());
  page.attrs.reserve(kept.size());
  for (const proto::DirEntry* e : kept) {
    page.name_starts.push_back(static_cast<uint32_t>(page.names.size()));
    page.names.append(e->name).push_back('\0');
    page.attrs.push_back(e->attrs);
  }
  MutexLock lock(mu_);
  while (!pages_.empty() && entries_ + kept.size() > kMaxEntries) {
    auto of_dir = pages_of_dir_.find(pages_.front().dir);
    of_dir->second.erase(of_dir->second.begin());  // the directory's oldest: this one
    if (of_dir->second.empty()) pages_of_dir_.erase(of_dir);
    entries_ -= pages_.front().attrs.size();
    pages_.pop_front();
    ++first_page_;
  }
  entries_ += kept.size();
  pages_of_dir_[page.dir].push_back(first_page_ + pages_.size());
  pages_.push_back(std::move(page));
}

std::optional<proto::WireStat> ListedAttrs::Get(std::string_view path, bool nofollow,
                                                int64_t now_ns, uint64_t changes) const {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view dir = slash == 0 ? path.substr(0, 1) : path.substr(0, slash);
  const std::string_view name = path.substr(slash + 1);
  MutexLock lock(mu_);
  auto of_dir = pages_of_dir_.find(std::string(dir));
  if (of_dir == pages_of_dir_.end()) return std::nullopt;
  // The newest listing wins.
  for (auto number = of_dir->second.rbegin(); number != of_dir->second.rend(); ++number) {
    const Page* page = &pages_[static_cast<size_t>(*number - first_page_)];
    auto name_at = [&](uint32_t start) { return std::string_view(page->names.c_str() + start); };
    auto it =
        std::lower_bound(page->name_starts.begin(), page->name_starts.end(), name,
                         [&](uint32_t start, std::string_view n) { return name_at(start) < n; });
    if (it == page->name_starts.end() || name_at(*it) != name) continue;
    if (page->changes != changes || now_ns - page->listed_ns >= valid_ns_) {
      return std::nullopt;
    }
    const proto::WireStat& attrs = page->attrs[static_cast<size_t>(it - page->name_starts.begin())];
    if (!nofollow && S_ISLNK(attrs.mode)) return std::nullopt;  // the target's are wanted
    return attrs;
  }
  return std::nullopt;
}

bool ListedAttrs::NoteMiss(std::string_view path, int64_t now_ns) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return false;
  const std::string dir(slash == 0 ? path.substr(0, 1) : path.substr(0, slash));
  MutexLock lock(mu_);
  if (misses_.size() >= kMaxMissDirs && !misses_.contains(dir)) misses_.clear();
  auto& [count, since_ns] = misses_[dir];
  if (count == 0 || now_ns - since_ns >= valid_ns_) {
    count = 0;
    since_ns = now_ns;
  }
  if (++count < kMissesBeforeListing) return false;
  misses_.erase(dir);
  return true;
}

}  // namespace iorelay::client
