// Lexical normalisation of absolute and relative paths (see path_resolve.h).
#include "preload/path_resolve.h"

#include <cerrno>
#include <cstring>

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

int CanonicalPath(const char* path, int skip, PathOracle& oracle, char* out, size_t out_size) {
  constexpr int kMaxLinks = 40;  // as the kernel's MAXSYMLINKS
  char rest[2 * 4096 + 2];       // what is left to walk
  char target[4096];
  size_t rest_len = strlen(path);
  if (path[0] != '/' || out_size < 2) return -EINVAL;
  if (rest_len >= sizeof rest) return -ENAMETOOLONG;
  memcpy(rest, path, rest_len + 1);
  size_t len = 0;  // out holds "" for "/" while building; components are "/name"
  int depth = 0;   // components in out
  int links = 0;
  const char* s = rest;
  while (*s != '\0') {
    while (*s == '/') ++s;
    if (*s == '\0') break;
    const char* start = s;
    while (*s != '\0' && *s != '/') ++s;
    const size_t n = static_cast<size_t>(s - start);
    if (n == 1 && start[0] == '.') continue;
    if (IsDotDot(start, n)) {
      while (len > 0 && out[len - 1] != '/') --len;
      if (len > 0) --len, --depth;
      if (depth < skip) skip = depth;  // (back above the prefix: what follows is looked at)
      continue;
    }
    if (len + 1 + n + 1 > out_size) return -ENAMETOOLONG;
    out[len++] = '/';
    memcpy(out + len, start, n);
    len += n;
    out[len] = '\0';
    if (++depth <= skip) continue;
    if (!oracle.InTree(out)) {  // (libc walks the rest, with the path's own trailing slash)
      const bool slash_after = *s == '/';
      while (*s == '/') ++s;
      const size_t left = strlen(s);
      if (len + 1 + left + 1 > out_size) return -ENAMETOOLONG;
      if (slash_after) out[len++] = '/';
      memcpy(out + len, s, left + 1);
      return kLeftTheTree;
    }
    const long got = oracle.ReadLink(out, target, sizeof target);
    if (got == -EINVAL) continue;  // not a link
    if (got < 0) return static_cast<int>(got);
    if (++links > kMaxLinks) return -ELOOP;
    // The link's target, then what was left after the link, walked from where the link is
    // (a relative target) or from the top. One slash joins them, and none is added after the
    // target when nothing followed the link (a path handed to libc on leaving the tree must
    // not end in a slash that asks for a directory its own path did not ask for).
    const bool slash_after = *s == '/';
    while (*s == '/') ++s;
    const size_t left = strlen(s);
    const size_t join = slash_after ? 1 : 0;
    if (static_cast<size_t>(got) + join + left + 1 > sizeof rest) return -ENAMETOOLONG;
    memmove(rest + got + join, s, left + 1);
    memcpy(rest, target, static_cast<size_t>(got));
    if (join > 0) rest[got] = '/';
    s = rest;
    if (target[0] == '/') {  // (from the top: every component is looked at again)
      len = 0;
      depth = 0;
      skip = 0;
    } else {
      while (len > 0 && out[len - 1] != '/') --len;  // (the link's own name goes)
      --len;
      --depth;
    }
  }
  if (len == 0) out[len++] = '/';
  out[len] = '\0';
  return static_cast<int>(len);
}

}  // namespace iorelay::preload
