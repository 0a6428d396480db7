// The client's end of a shared-memory connection (docs/interposer.md, Shared memory): the two
// rings the daemon handed over, and the doorbells (an eventfd to the daemon, a futex on a flag in
// the shared page from it). Calls look like the socket calls they stand
// in for (-1 with errno), so Connection keeps one framing code for both transports.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>

#include "common/shm_ring.h"
#include "common/status.h"

namespace iorelay::client {

class ShmChannel {
 public:
  // Maps `memfd` (closed here whatever happens) holding rings of `ring_bytes`; takes the
  // daemon's eventfd doorbell (closed by the channel). Both are internal descriptors. The
  // daemon's doorbell to this side is a futex in the shared page (common/shm_ring.h).
  static Result<std::unique_ptr<ShmChannel>> Map(int memfd, int daemon_bell, uint64_t ring_bytes);
  ~ShmChannel();
  ShmChannel(const ShmChannel&) = delete;
  ShmChannel& operator=(const ShmChannel&) = delete;

  // Like recvmsg/sendmsg with MSG_DONTWAIT: bytes moved, or -1 with errno EAGAIN (nothing to
  // read, or no room) or EPROTO (a ring position out of range).
  ssize_t RecvV(struct iovec* iov, int count);
  ssize_t Send(const struct iovec* iov, int count);
  // The stream position of the next byte Send writes (its offset in the ring, modulo the
  // ring's size).
  uint64_t SendPosition() const { return out_.position(); }
  // Waits up to `timeout_ms` (less: it looks at `socket` every 100 ms) for replies
  // (`for_read`) or room, or for `socket` to hang up (the daemon closed it or died): 1 ready or
  // rung, 0 nothing yet (timed out, or woken by a sign of life), -1 the socket ended (errno
  // set).
  int Wait(bool for_read, int socket, int timeout_ms);
  // Whether the daemon signalled that it lives (ShmHeader::daemon_alive) since the last call.
  bool DaemonSignalledAlive();

  // Descriptor bookkeeping for the interposer (an application dup2 onto one of them).
  bool UsesFd(int fd) const { return fd == daemon_bell_; }
  void ReplaceFd(int old_fd, int new_fd);
  // Fork child: unmaps and closes without ringing anything.
  void Abandon();

 private:
  ShmChannel() = default;
  void Release();

  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  int daemon_bell_ = -1;     // rung after writing requests or making room for replies
  uint64_t alive_seen_ = 0;  // daemon_alive when last looked at
  ShmRingWriter out_;        // client → daemon
  ShmRingReader in_;         // daemon → client
};

}  // namespace iorelay::client
