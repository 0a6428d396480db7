// Reading the client's own small files (credential, placement map) with raw syscalls, so
// that an interposer wrapping open/read/close never sees them.
#pragma once

#include <string>

#include "common/auth.h"
#include "common/status.h"

namespace iorelay::client {

// The whole file (at most `max_bytes`); EFBIG if larger.
Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes);

// Same contract as LoadSecretFile (common/auth.h): 64 hex digits, mode 0600 or stricter.
Result<Secret> LoadSecretRaw(const std::string& path);

}  // namespace iorelay::client
