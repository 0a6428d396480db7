// The relay's walk of the components a ".." climbs out of (upstream_path.h).
#include "relay/upstream_path.h"

#include <sys/stat.h>

#include <algorithm>
#include <deque>
#include <vector>

namespace iorelay::relay {
namespace {

// Appends (or, with `front`, prepends in order) the components of `path` to `todo`.
void SplitInto(const std::string& path, std::deque<std::string>* todo, bool front) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) parts.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  if (front) {
    todo->insert(todo->begin(), parts.begin(), parts.end());
  } else {
    todo->insert(todo->end(), parts.begin(), parts.end());
  }
}

std::string Join(const std::string& root, const std::vector<std::string>& parts) {
  std::string out = root;
  for (const std::string& p : parts) out += "/" + p;
  return out;
}

}  // namespace

Result<std::string> ResolveUpstreamPath(const std::string& root, const std::string& rel,
                                        UpstreamLinks& links) {
  std::deque<std::string> todo;
  SplitInto(rel, &todo, /*front=*/false);
  std::vector<std::string> walked;  // beneath root; every one a directory when a ".." follows
  int followed = 0;
  while (!todo.empty()) {
    std::string comp = std::move(todo.front());
    todo.pop_front();
    if (comp == ".") continue;
    if (comp == "..") {
      if (walked.empty()) return Status::PermissionDenied("path leaves the export: " + rel);
      walked.pop_back();
      continue;
    }
    if (std::find(todo.begin(), todo.end(), "..") == todo.end()) {
      walked.push_back(std::move(comp));  // never climbed out of: upstream walks it
      continue;
    }
    walked.push_back(std::move(comp));
    const std::string here = Join(root, walked);
    Result<mode_t> type = links.TypeOf(here);
    if (!type.ok()) return type.status();
    if (*type == S_IFDIR) continue;
    if (*type != S_IFLNK) return Status::FromErrno(ENOTDIR, here);
    if (++followed > kMaxLinksFollowed) return Status::FromErrno(ELOOP, rel);
    Result<std::string> target = links.TargetOf(here);
    if (!target.ok()) return target.status();
    if (target->empty()) return Status::FromErrno(ENOENT, here);
    if ((*target)[0] == '/') {
      return Status::PermissionDenied("absolute symlink leaves the export: " + here);
    }
    walked.pop_back();
    SplitInto(*target, &todo, /*front=*/true);
  }
  return Join(root, walked);
}

}  // namespace iorelay::relay
