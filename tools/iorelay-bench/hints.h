// The MPI-IO hints iorelay-bench passes to MPI_File_open, checked before MPI sees them: MPI
// ignores a key it does not know and ROMIO falls back to its default on a value it cannot read,
// so a misspelt key or a bad value would silently change nothing. Pure code.
#pragma once

#include <string>

#include "common/status.h"

namespace iorelay::bench {

// "KEY=VALUE" where KEY is an MPI reserved hint or a ROMIO hint and VALUE has its form (a
// positive byte count, enable/disable/automatic, true/false, a cb_config_list, ...).
// InvalidArgument naming the key, the value and what it accepts.
Status CheckHint(const std::string& text);

}  // namespace iorelay::bench
