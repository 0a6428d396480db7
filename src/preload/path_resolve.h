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

}  // namespace iorelay::preload
