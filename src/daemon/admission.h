// Making jobs: the ones given at start (--credential with the --export roots, and the admin
// credential) and the admin channel's admissions (kAdmit), with the checks that need the
// system: secrets readable by the daemon's user only, roots that are directories the daemon's
// user owns, named without a symlink, apart from every other job's roots.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "daemon/core.h"

namespace iorelay::daemon {

// Resolves --max-connections against the soft RLIMIT_NOFILE (a connection holds up to 4
// descriptors): 0 becomes RLIMIT_NOFILE/4; a larger explicit value is EINVAL.
Status FitConnectionsToNofile(Config* config);

// The shares a job admitted at run time gets when its admission gives none (docs/security.md,
// "Shares"); jobs admitted at start are bounded only by the daemon-wide limits, as before.
JobShares DefaultShares(const Config& config);

// Admits the --credential jobs (applications 0, 1, ... in their order, sharing the --export
// roots), then the admin credential.
Status AdmitStartJobs(Core& core);

// What kAdmit asks for, its secret unwrapped.
struct AdmitSpec {
  std::string name;
  Secret secret{};
  std::vector<std::string> roots;  // "PREFIX=DIR"
  uint32_t weight = 1;
  int64_t lease_ns = 0;
  JobShares shares;  // 0: the default
};

// Checks and opens the roots, admits the job and gives the scheduler its weight. EINVAL for a
// malformed root or weight, EACCES for a root the daemon may not export (not owned by its user,
// reached through a symlink, overlapping another job's), ENOENT/ENOTDIR for a missing one,
// EEXIST for a name or credential already admitted. Not in a relay (ENOTSUP).
Result<JobPtr> AdmitJob(Core& core, AdmitSpec spec);

}  // namespace iorelay::daemon
