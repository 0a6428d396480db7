// Shared helpers of the per-file C API: run remotely, or directly once the file has fallen
// back (IORELAY_FALLBACK=direct) because its daemon was lost.
#pragma once

#include "client/client.h"
#include "client/direct.h"

namespace iorelay::client {

// `remote()` gives Result<long>: ok holds a value or -errno from the daemon; not ok means
// the transport failed, after which the file switches to direct access if configured.
template <class Remote, class Direct>
long FileOp(iorelay_file* f, Remote remote, Direct direct) {
  if (!f) return -EBADF;
  if (int fd = f->direct_fd.load(); fd >= 0) return direct(fd);
  Result<long> r = remote();
  if (r.ok()) return *r;
  if (SwitchToDirect(f)) return direct(f->direct_fd.load());
  return -r.status().code();
}

// A daemon reply status as Result<long>: 0 or -errno.
inline Result<long> StatusOnly(const Result<int32_t>& r) {
  if (!r.ok()) return r.status();
  return static_cast<long>(-*r);
}

}  // namespace iorelay::client
