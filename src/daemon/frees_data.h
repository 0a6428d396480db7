// Whether a metadata request may free a large file's data: an unlink or a rename over the file's
// last name, an open with O_TRUNC, the close of an unlinked file's last descriptor. File systems
// free the blocks inside the call (ext4 in unlink, truncation and that last close), so its time
// grows with the file, and an event loop does not run it, however quick metadata was of late.
#pragma once

#include <cstdint>

#include "daemon/core.h"
#include "proto/messages.h"

namespace iorelay::daemon {

// Allocated bytes a loop may free itself (a few extents at most).
inline constexpr int64_t kLoopFreeBytes = 1 << 20;

// Whether the request of `op` may free a large file's data: one stat of the file it names. Ops
// that never do take this default; those that may have a specialization below (frees_data.cc).
template <proto::Op op, class Request>
bool MayFreeData(Core&, Session&, const Request&) {
  return false;
}
template <>
bool MayFreeData<proto::Op::kUnlink>(Core& core, Session& session, const proto::PathRequest& q);
template <>
bool MayFreeData<proto::Op::kRename>(Core& core, Session& session, const proto::RenameRequest& q);
template <>
bool MayFreeData<proto::Op::kOpen>(Core& core, Session& session, const proto::OpenRequest& q);
template <>
bool MayFreeData<proto::Op::kClose>(Core& core, Session& session, const proto::HandleRequest& q);

}  // namespace iorelay::daemon
