// The daemon's view of the network: byte streams from listeners. TCP and Unix sockets
// implement it now; an RDMA (libfabric) transport can later without touching daemon logic.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <memory>
#include <string>

#include "common/status.h"

namespace iorelay::daemon {

// One client connection. Recv is called by one thread at a time; Sendv by one thread at a
// time (the caller serialises replies); Shutdown may be called from any thread and makes a
// blocked Recv return 0.
class Connection {
 public:
  virtual ~Connection() = default;
  // Up to `n` bytes; 0 at end of stream.
  virtual Result<size_t> Recv(void* buf, size_t n) = 0;
  // All the bytes of `iov`, or an error.
  virtual Status Sendv(const struct iovec* iov, int iovcnt) = 0;
  virtual void Shutdown() = 0;
  // Recv fails (EAGAIN) when no byte arrives within `ms` milliseconds; 0: wait forever.
  virtual void SetRecvTimeout(int ms) = 0;
  // Stops receiving only (daemon shutdown): Recv returns 0, replies can still be sent.
  virtual void StopReceiving() = 0;
  virtual std::string peer() const = 0;
};

class Listener {
 public:
  virtual ~Listener() = default;
  // Blocks for the next connection; fails (EINVAL, ECONNABORTED...) after Shutdown().
  virtual Result<std::unique_ptr<Connection>> Accept() = 0;
  // The actual address, with the port chosen by the kernel ("tcp:127.0.0.1:43211").
  virtual std::string address() const = 0;
  virtual void Shutdown() = 0;
};

// "tcp:HOST:PORT" (port 0: any free port) or "unix:PATH". A Unix path where a daemon is
// listening is refused (EADDRINUSE), as is a file that is not a socket (EEXIST); a stale socket
// nobody listens on is replaced. The listener removes its socket file at the end only if the
// path still names that socket.
Result<std::unique_ptr<Listener>> Listen(const std::string& spec);

}  // namespace iorelay::daemon
