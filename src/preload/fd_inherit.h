// What an exec'd image inherits from the old one's forwarded descriptors, encoded in
// one environment variable (see docs/interposer.md, "exec").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace iorelay::preload {

inline constexpr const char* kInheritEnv = "IORELAY_INHERIT_FDS";

struct InheritedFd {
  int fd = -1;
  bool is_file = true;  // false: a directory / O_PATH descriptor (no offset)
  int flags = 0;        // open flags; the new image drops O_CREAT, O_EXCL, O_TRUNC
  int64_t offset = 0;   // the shared offset at exec time
  std::string path;     // absolute, normalised
};

// "fd,kind,flags,offset,hexpath;..." with kind f or d and the path hex-encoded, so
// that no byte of a path needs escaping.
std::string EncodeInherited(const std::vector<InheritedFd>& fds);
// False (and *out unspecified) on any malformed entry.
bool DecodeInherited(std::string_view text, std::vector<InheritedFd>* out);

}  // namespace iorelay::preload
