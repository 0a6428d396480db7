// Lexical path normalisation for deciding what is forwarded: no allocation and no
// system calls, so it is usable from any wrapper.
#pragma once

#include <cstddef>

namespace iorelay::preload {

// Writes the absolute, lexically normalised form of `path` to out (NUL-terminated):
// relative paths are taken against `base` (an absolute directory; ignored when path
// is absolute), "." and empty components vanish, ".." removes the previous component
// (and stays at "/"), trailing slashes go. Symlinks are not followed.
// Returns the length, or -ENAMETOOLONG if out is too small, -EINVAL if the result
// would not be absolute (relative path with a null or relative base), -ENOENT for "".
int NormalizePath(const char* base, const char* path, char* out, size_t out_size);

}  // namespace iorelay::preload
