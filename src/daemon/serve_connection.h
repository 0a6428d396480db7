// The life of one client connection: handshake, then reading requests and routing them,
// until the client goes, sends a malformed frame, or the daemon stops.
#pragma once

#include "daemon/core.h"

namespace iorelay::daemon {

// Runs on the connection's own thread; returns when the connection is finished.
void ServeConnection(Core& core, const ConnPtr& conn);

}  // namespace iorelay::daemon
