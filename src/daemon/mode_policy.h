// The permission bits a client may give the files and directories the daemon creates for it.
// By default everything but set-user-ID and set-group-ID: the daemon creates files as its own
// user, so a job could otherwise leave behind a program that runs as the daemon's user (root,
// often). `--allow-setid` lets them through, for a daemon that runs as the job's own user.
#pragma once

#include <sys/stat.h>

namespace iorelay::daemon {

inline constexpr mode_t kClientModeBits = 07777 & ~(S_ISUID | S_ISGID);

inline mode_t ClientMode(mode_t requested, bool allow_setid) {
  return requested & (allow_setid ? 07777 : kClientModeBits);
}

}  // namespace iorelay::daemon
