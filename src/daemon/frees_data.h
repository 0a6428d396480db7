// Whether a metadata request may free a large file's data: an unlink or a rename over the file's
// last name, an open with O_TRUNC, the close of an unlinked file's last descriptor. File systems
// free the blocks inside the call (ext4 in unlink, truncation and that last close), so its time
// grows with the file, and an event loop does not run it, however quick metadata was of late.
#pragma once

#include <cstdint>
#include <span>

#include "daemon/core.h"
#include "proto/messages.h"

namespace iorelay::daemon {

// Allocated bytes a loop may free itself (a few extents at most).
inline constexpr int64_t kLoopFreeBytes = 1 << 20;

// One stat of the file the request names (none for other ops); a request that does not decode
// or map is not freeing anything: its handler refuses it.
bool MayFreeData(Core& core, Session& session, proto::Op op, std::span<const uint8_t> payload);

}  // namespace iorelay::daemon
