// stdin/stdout/stderr over forwarded descriptors 0-2: glibc writes its standard
// streams with internal calls, so such a stream is replaced by a cookie FILE.
#pragma once

namespace iorelay::preload {

// If fd (0, 1 or 2) is forwarded, makes stdin/stdout/stderr a cookie FILE on it
// (unless it already is one). Any data still buffered in the old stream is lost:
// callers flush it first (FlushStdStream) while the descriptor is still the old one.
void AdoptStdStream(int fd);
// fflush of stdin/stdout/stderr for fd 0-2; nothing for other descriptors.
void FlushStdStream(int fd);

}  // namespace iorelay::preload
