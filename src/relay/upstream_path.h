// The upstream path a relay asks for, given a client path beneath one of its exports. ".."
// after a symbolic link leaves the link's target, as the kernel's walk does, so the relay reads
// the links a ".." climbs out of; and no ".." climbs above the relay's root, which may be
// narrower than the upstream daemon's.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/status.h"

namespace iorelay::relay {

// What the walk asks upstream about a path (one request each).
class UpstreamLinks {
 public:
  virtual ~UpstreamLinks() = default;
  // The file type bits (S_IFMT) of `path`, a last symbolic link not followed; or its error.
  virtual Result<mode_t> TypeOf(const std::string& path) = 0;
  // The target of the symbolic link `path`.
  virtual Result<std::string> TargetOf(const std::string& path) = 0;
};

// Symbolic links followed in one walk before ELOOP (the kernel's limit).
inline constexpr int kMaxLinksFollowed = 40;

// `root` + "/" + `rel` as upstream must be asked for it. Components that a later ".." climbs
// out of are resolved here, as the kernel would: a symbolic link among them is read and its
// target walked in its place (ELOOP past kMaxLinksFollowed links; an absolute target is
// refused with EACCES, as the daemon refuses it beneath an export), a missing one gives ENOENT
// and one that is not a directory ENOTDIR. A ".." above `root` is refused with EACCES.
// Components with no ".." after them go upstream as they are, for upstream's own walk (no
// request here: a path without ".." costs nothing).
Result<std::string> ResolveUpstreamPath(const std::string& root, const std::string& rel,
                                        UpstreamLinks& links);

}  // namespace iorelay::relay
