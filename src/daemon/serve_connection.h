// The life of one client connection, frame by frame: handshake, then routing requests, until
// the client goes, sends a malformed frame, or the daemon stops. Called by the connection's
// event loop (io_loop.h); nothing here waits for the client.
#pragma once

#include <optional>
#include <string>

#include "common/auth.h"
#include "common/handshake_transcript.h"
#include "daemon/core.h"
#include "daemon/frame_reader.h"

namespace iorelay::daemon {

// Before the client's kFinished: whether a hello was answered, with which nonce, the transcript
// so far, and, once the auth reply is sent, the MAC kFinished must carry.
struct HandshakeState {
  bool hello_done = false;
  Nonce server_nonce{};
  std::optional<HandshakeTranscript> transcript;  // from the hello on
  bool awaiting_finished = false;                 // auth answered, kFinished not yet seen
  Proof expected_finished{};
};

// Handles the frame `in` just completed (kHello/kAuth/kFinished first, then requests).
// False when the connection must close (the reason is logged).
bool HandleFrame(Core& core, const ConnPtr& conn, FrameReader& in, HandshakeState* hs,
                 int64_t arrival_ns);
// The connection is gone: its session ends when it was the last one (locks released, parked
// lock waits ended, files closed).
void EndConnection(Core& core, const ConnPtr& conn);
// "iorelayd: connection from PEER: WHY; closing it".
void LogClose(const ConnPtr& conn, const std::string& why);

}  // namespace iorelay::daemon
