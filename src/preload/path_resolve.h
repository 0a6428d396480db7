// Lexical path normalisation for deciding what is forwarded: no allocation and no
// system calls, so it is usable from any wrapper.
#pragma once

#include <cstddef>

namespace iorelay::preload {

// What NormalizePath does with a ".." component.
enum class DotDot {
  kRemove,  // removes the previous component (and stays at "/"): where the path points lexically
  kKeep,    // keeps it, for the daemon to resolve where it really points (after a symbolic link
            // to a directory, ".." is the target's parent; after a missing name, ENOENT)
};

// Writes the absolute, normalised form of `path` to out (NUL-terminated): relative paths are
// taken against `base` (an absolute directory; ignored when path is absolute), "." and empty
// components vanish, ".." as `dotdot` says, trailing slashes go. Symlinks are not followed.
// Returns the length, or -ENAMETOOLONG if out is too small, -EINVAL if the result
// would not be absolute (relative path with a null or relative base), -ENOENT for "".
int NormalizePath(const char* base, const char* path, char* out, size_t out_size,
                  DotDot dotdot = DotDot::kRemove);

// Whether the ".." components of `path` (absolute, "." and empty components gone) never take it
// above its first `depth` components, so that a daemon resolving it beneath the root those
// components name stays beneath it.
bool DotDotsStayBelow(const char* path, int depth);

// What CanonicalPath asks of the tree it walks (the daemon, in the interposer).
class PathOracle {
 public:
  virtual ~PathOracle() = default;
  // The target of the symbolic link `abs` (its length, not NUL-terminated), -EINVAL when
  // `abs` exists and is not a link, another -errno when it cannot be looked at.
  virtual long ReadLink(const char* abs, char* buf, size_t size) = 0;
  // Whether `abs` lies in the tree (else the walk leaves it to libc).
  virtual bool InTree(const char* abs) = 0;
};

// CanonicalPath's result when a link led out of the tree: `out` holds the path to give libc.
inline constexpr int kLeftTheTree = 0;

// realpath's walk: the canonical absolute path of `path` (absolute; "." and ".." allowed), every
// symbolic link replaced by its target and ".." applied to what is resolved so far, each
// component looked at through `oracle` except the first `skip` (a forwarded prefix). Returns
// the length written to `out`, kLeftTheTree, or -errno: ELOOP after 40 links, ENAMETOOLONG,
// and what the oracle says (ENOENT, ENOTDIR, ...).
int CanonicalPath(const char* path, int skip, PathOracle& oracle, char* out, size_t out_size);

}  // namespace iorelay::preload
