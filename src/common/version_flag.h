// `--version` for every command-line tool: one line, "TOOL VERSION", from the VERSION file
// (through the generated iorelay/version.h).
#pragma once

#include <cstdio>
#include <cstring>

#include "iorelay/version.h"

namespace iorelay {

// True (after printing) when argv holds --version anywhere, as GNU tools answer it: the caller
// exits 0 without parsing anything else.
inline bool PrintVersionIfAsked(int argc, char** argv, const char* tool) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) {
      std::printf("%s %s\n", tool, IORELAY_VERSION);
      return true;
    }
  }
  return false;
}

}  // namespace iorelay
