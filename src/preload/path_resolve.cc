// Lexical normalisation of absolute and relative paths (see path_resolve.h).
#include "preload/path_resolve.h"

#include <cerrno>

namespace iorelay::preload {
namespace {

bool IsDotDot(const char* start, size_t n) { return n == 2 && start[0] == '.' && start[1] == '.'; }

// Appends the components of `s` to out[0, *len), resolving "." and ".." (as `dotdot` says).
bool AppendComponents(const char* s, char* out, size_t out_size, size_t* len, DotDot dotdot) {
  while (*s != '\0') {
    while (*s == '/') ++s;
    if (*s == '\0') break;
    const char* start = s;
    while (*s != '\0' && *s != '/') ++s;
    size_t n = static_cast<size_t>(s - start);
    if (n == 1 && start[0] == '.') continue;
    if (IsDotDot(start, n) && dotdot == DotDot::kRemove) {
      while (*len > 0 && out[*len - 1] != '/') --*len;  // drop the last component
      if (*len > 0) --*len;                             // and its slash
      continue;
    }
    if (*len + 1 + n + 1 > out_size) return false;
    out[(*len)++] = '/';
    for (size_t i = 0; i < n; ++i) out[(*len)++] = start[i];
  }
  return true;
}

}  // namespace

int NormalizePath(const char* base, const char* path, char* out, size_t out_size, DotDot dotdot) {
  if (path == nullptr || out_size < 2) return -EINVAL;
  if (path[0] == '\0') return -ENOENT;
  size_t len = 0;  // out holds "" for "/" while building; components are "/name"
  if (path[0] != '/') {
    if (base == nullptr || base[0] != '/') return -EINVAL;
    if (!AppendComponents(base, out, out_size, &len, dotdot)) return -ENAMETOOLONG;
  }
  if (!AppendComponents(path, out, out_size, &len, dotdot)) return -ENAMETOOLONG;
  if (len == 0) out[len++] = '/';
  out[len] = '\0';
  return static_cast<int>(len);
}

bool DotDotsStayBelow(const char* path, int depth) {
  int at = 0;  // components deep
  for (const char* s = path; *s != '\0';) {
    while (*s == '/') ++s;
    if (*s == '\0') break;
    const char* start = s;
    while (*s != '\0' && *s != '/') ++s;
    if (!IsDotDot(start, static_cast<size_t>(s - start))) {
      ++at;
    } else if (--at < depth) {
      return false;
    }
  }
  return true;
}

}  // namespace iorelay::preload
