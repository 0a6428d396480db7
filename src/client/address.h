// Daemon addresses as users write them (tcp:HOST:PORT, unix:PATH, unix:@NAME) and the socket
// connect.
#pragma once

#include <string>

#include "common/status.h"

namespace iorelay::client {

struct Address {
  enum class Kind { kTcp, kUnix };
  Kind kind = Kind::kUnix;
  std::string host;  // tcp
  int port = 0;      // tcp
  std::string path;  // unix: the absolute path, or @NAME
  std::string text;  // as given, for messages
};

// Strict: "tcp:HOST:PORT" (HOST may be [v6]), "unix:PATH" (absolute, fits sun_path) or
// "unix:@NAME" (an abstract socket: common/unix_address.h).
Result<Address> ParseAddress(const std::string& text);

// A connected, non-blocking, close-on-exec socket at a high descriptor number, recorded as
// internal; TCP_NODELAY for TCP. Refused, unreachable or timed out → EIO; the message names
// the address and the cause.
Result<int> ConnectSocket(const Address& addr, int timeout_ms);

}  // namespace iorelay::client
