// The life of one client connection, frame by frame: what its protocol (conn_protocol.h) decides
// of each frame, done: replies sent, the session admitted, requests routed, until the client
// goes, sends a malformed frame, or the daemon stops. Called by the connection's event loop
// (io_loop.h); nothing here waits for the client.
#pragma once

#include <string>

#include "daemon/conn_protocol.h"
#include "daemon/core.h"
#include "daemon/frame_reader.h"

namespace iorelay::daemon {

// The protocol's settings for a connection of `core` on `transport` (as accepted).
ProtocolSettings ProtocolSettingsFor(const Core& core, const Connection& transport);

// Handles the frame `in` just completed: `protocol` says what it is for (the handshake's
// replies, an admission, a request), and this does it. False when the connection must close
// (the reason is logged).
bool HandleFrame(Core& core, const ConnPtr& conn, FrameReader& in, ConnProtocol& protocol,
                 int64_t arrival_ns);
// The connection is gone: its session ends when it was the last one (locks released, parked
// lock waits ended, files closed).
void EndConnection(Core& core, const ConnPtr& conn);
// "iorelayd: connection from PEER: WHY; closing it".
void LogClose(const ConnPtr& conn, const std::string& why);

}  // namespace iorelay::daemon
