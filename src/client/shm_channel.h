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
  // With `pipe_pages` > 0, also the client's ends of the two pipes (internal descriptors, made
  // non-blocking here): `pipe_out` to the daemon, `pipe_in` from it.
  static Result<std::unique_ptr<ShmChannel>> Map(int memfd, int daemon_bell, uint64_t ring_bytes,
                                                 int pipe_out = -1, int pipe_in = -1,
                                                 uint32_t pipe_pages = 0);
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
  // Whether reply bytes are in the ring (a look at the daemon's position, nothing checked):
  // what a wait spins on before it sleeps (client/spin_wait.h).
  bool RepliesWaiting() const { return in_.HasBytes(); }
  // Whether the daemon signalled that it lives (ShmHeader::daemon_alive) since the last call.
  bool DaemonSignalledAlive();

  // Piped data (docs/interposer.md, Shared memory): pages a piped request's data may span (0:
  // no pipes), and the pipes' calls, -1 with errno as the syscalls. PipeOut references the
  // memory of `iov` from the pipe to the daemon (vmsplice; the daemon takes the bytes out when
  // it reads the request's frame, so the memory must stay as it is until the reply): the bytes
  // taken, EAGAIN when the pipe is full. PipeIn reads bytes the daemon put in its pipe.
  uint32_t pipe_pages() const { return pipe_pages_; }
  ssize_t PipeOut(const struct iovec* iov, int count);
  ssize_t PipeIn(const struct iovec* iov, int count);
  int pipe_out_fd() const { return pipe_out_; }

  // Descriptor bookkeeping for the interposer (an application dup2 onto one of them).
  bool UsesFd(int fd) const {
    return fd == daemon_bell_ || (fd >= 0 && (fd == pipe_out_ || fd == pipe_in_));
  }
  void ReplaceFd(int old_fd, int new_fd);
  // Fork child: unmaps and closes without ringing anything.
  void Abandon();

 private:
  ShmChannel() = default;
  void Release();

  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  int daemon_bell_ = -1;  // rung after writing requests or making room for replies
  int pipe_out_ = -1;     // piped writes' data, to the daemon
  int pipe_in_ = -1;      // piped reads' data, from the daemon
  uint32_t pipe_pages_ = 0;
  uint64_t alive_seen_ = 0;  // daemon_alive when last looked at
  ShmRingWriter out_;        // client → daemon
  ShmRingReader in_;         // daemon → client
};

}  // namespace iorelay::client
