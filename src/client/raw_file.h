// Reading the client's own small files (the placement map) with raw syscalls, so
// that an interposer wrapping open/read/close never sees them.
#pragma once

#include <string>

#include "common/status.h"

namespace iorelay::client {

// The whole file (at most `max_bytes`); EFBIG if larger.
Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes);

}  // namespace iorelay::client
