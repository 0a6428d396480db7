// Resolution of a relative path strictly beneath a directory fd: openat2(RESOLVE_BENEATH)
// when the kernel has it, else a component walk with the same refusals.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/status.h"

namespace iorelay::backend {

// Opens `rel` beneath `root_fd` with open(2) `flags` (O_CLOEXEC added). An escape (`..`
// above the root, an absolute symlink, a symlink leading outside, a magic link) is
// refused with EACCES and touches nothing outside the root; other failures carry the
// errno of the failing call. "" means the root itself.
Result<int> OpenBeneath(int root_fd, const std::string& rel, int flags, mode_t mode);

// The fallback walk used when openat2 is unavailable (ENOSYS); public for tests.
Result<int> OpenBeneathByWalk(int root_fd, const std::string& rel, int flags, mode_t mode);

// The parent directory of `rel` (opened O_PATH beneath the root) and the last component.
// Trailing slashes are ignored. When the last component is "", "." or "..", `name` is
// returned as "." and `fd` is the directory `rel` itself names, so callers never pass
// ".." to an *at() call.
struct ParentRef {
  int fd = -1;
  std::string name;
  bool is_self = false;  // `rel` named a directory itself ("", ".", ".." endings)
};
Result<ParentRef> OpenParentBeneath(int root_fd, const std::string& rel);

}  // namespace iorelay::backend
