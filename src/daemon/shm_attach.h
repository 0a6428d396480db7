// Answering kShmAttach: whether this connection may move to shared memory (the daemon allows
// it, the socket is a Unix socket, the client shares this host's boot and network namespace,
// nothing is in flight) and, if so, the move itself. Runs on the connection's event loop.
#pragma once

#include <span>

#include "daemon/core.h"

namespace iorelay::daemon {

// A refusal is an error reply and the connection stays on its socket. False when the
// connection must close (a malformed request, or the hand-over failed half way).
bool AttachShm(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
               std::span<const uint8_t> payload);

}  // namespace iorelay::daemon
