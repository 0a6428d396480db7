// vfork: the child of a real vfork shares the parent's memory (and the client's
// state), so the interposer turns vfork into fork, whose atfork handlers give the
// child its own connections (state.cc).
#include <unistd.h>

#include "preload/state.h"

extern "C" {

IORELAY_EXPORT pid_t vfork(void) noexcept { return fork(); }

}  // extern "C"
