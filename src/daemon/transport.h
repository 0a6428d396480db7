// The daemon's view of the network: byte streams from listeners. TCP and Unix sockets
// implement it now; an RDMA (libfabric) transport can later without touching daemon logic.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "daemon/buffer_pool.h"

namespace iorelay::daemon {

// What a transport has beyond a byte stream, each an interface of its own that only the
// transports having it implement (as Ceph's messenger keeps its network stack apart from the
// connections it serves). The daemon asks a connection once what it has (capabilities()) and
// uses a capability only through its pointer, null where the transport lacks it; nothing
// outside the transports asks which transport a connection is.
//
// Room for RDMA (libfabric): its connection would be a Connection whose Recv and SendSome move
// bytes through its queue pair, PollFd the completion channel; its registered memory an
// InPlaceData (a large write's data lent where it landed, a read's reply filled where the peer
// reads it), and busy-polling of the completion queue after a request a SideChannel (Polling).
// The event loop, the frame reader and the reply queue serve it unchanged.

// Data taken and given in place, in memory the peer shares (shared-memory rings mapped twice).
class InPlaceData {
 public:
  // The next `n` bytes of the incoming stream, taken where they are (no copy) when all of them
  // have arrived; an empty Buffer otherwise (nothing taken: Recv them). The frame reader then
  // receives a frame's header and fields alone, so that a large write's data is still unread
  // when its turn comes.
  virtual Buffer Borrow(size_t n) = 0;
  // `n` contiguous bytes of the outgoing stream for the caller to fill, or null when the
  // transport cannot give them now. Nothing else is sent until CommitReserved(m), which sends
  // the first m <= n of them.
  virtual uint8_t* Reserve(size_t n) = 0;
  virtual void CommitReserved(size_t m) = 0;

 protected:
  ~InPlaceData() = default;
};

// What a transport has beside its stream for the event loop: a second descriptor whose events
// matter (shared memory: its doorbell is the PollFd, its socket's hang-up ends it), polling for
// a while instead of waiting for an event, and a way to say the daemon lives without a frame.
class SideChannel {
 public:
  // The second descriptor the loop watches (edge-triggered, readable or hung up), or -1. The
  // loop calls OnAuxEvent when it fires, then reads the connection.
  virtual int AuxPollFd() const = 0;
  virtual void OnAuxEvent() = 0;
  // The peer is gone (or broke the protocol) as OnAuxEvent found; Recv reports it (end of
  // stream or an error) once the bytes already there have been read.
  virtual bool HungUp() const = 0;
  // After Recv took fewer bytes than asked: true when the transport left its doorbell unarmed
  // (polled a while after a request), so the loop must look again soon instead of waiting.
  virtual bool Polling() const = 0;
  // Tells the peer the daemon lives without sending a frame (a heartbeat while a reservation
  // holds the stream); false when it cannot.
  virtual bool SignalAlive() = 0;

 protected:
  ~SideChannel() = default;
};

// Piped data (shared memory with pipes; docs/daemon.md, Piped data): the read end of the
// client's pipe to the daemon and the write end of the daemon's pipe to the client. PipeLock
// serialises the daemon's piped replies, so that their bytes enter the pipe in the order of
// their frames.
class PipedData {
 public:
  virtual int PipeFromClient() const = 0;
  virtual int PipeToClient() const = 0;
  virtual std::mutex* PipeLock() = 0;

 protected:
  ~PipedData() = default;
};

// A connection's optional capabilities; null: the transport has not got it.
struct Capabilities {
  InPlaceData* in_place = nullptr;
  SideChannel* side = nullptr;
  PipedData* pipes = nullptr;
};

// One client connection, non-blocking: a minimal byte stream. The daemon's event loops wait for
// readiness on PollFd() and never block in Recv or SendSome. Recv is called by one thread at a
// time; SendSome by one thread at a time (the caller serialises replies); Shutdown may be
// called from any thread.
class Connection {
 public:
  virtual ~Connection() = default;
  // Up to `n` bytes; 0 at end of stream; EAGAIN when nothing is there now.
  virtual Result<size_t> Recv(void* buf, size_t n) = 0;
  // As many bytes of `iov` as the transport takes now (0 when it takes none), or an error.
  virtual Result<size_t> SendSome(const struct iovec* iov, int iovcnt) = 0;
  // Ends both directions; the loop then sees end of stream or an error.
  virtual void Shutdown() = 0;
  // A descriptor that polls readable/writable with the connection (epoll).
  virtual int PollFd() const = 0;
  // Who is on the other end, for logs: "tcp:HOST:PORT" of the client, or for a Unix socket
  // (whose client has no name) "unix:PATH (pid N, uid U)", the listener and the process that
  // connected.
  virtual std::string peer() const = 0;
  // True when the bytes cross a network (TCP): the daemon seals such connections (frame tags,
  // common/frame_mac.h). Local transports rely on the host's permissions instead.
  virtual bool OverNetwork() const { return false; }
  // What the transport has beyond the stream; the same for the connection's life.
  virtual Capabilities capabilities() { return {}; }
};

class Listener {
 public:
  virtual ~Listener() = default;
  // The next connection, non-blocking: EAGAIN when none is waiting; fails (EINVAL...) after
  // Shutdown(). Accepted connections are non-blocking too.
  virtual Result<std::unique_ptr<Connection>> Accept() = 0;
  // The actual address, with the port chosen by the kernel ("tcp:127.0.0.1:43211").
  virtual std::string address() const = 0;
  // A descriptor that polls readable when a connection is waiting.
  virtual int PollFd() const = 0;
  virtual void Shutdown() = 0;
};

// "tcp:HOST:PORT" (port 0: any free port) or "unix:PATH". A Unix path is claimed with the lock
// PATH.lock, held as long as the listener (unix_path_claim.h): a path another daemon holds or
// answers at is refused at once (EADDRINUSE), as is a file that is not a socket (EEXIST); a
// stale socket nobody listens on is replaced. The listener removes its socket file at the end
// only if the path still names that socket, then its lock file.
Result<std::unique_ptr<Listener>> Listen(const std::string& spec);

}  // namespace iorelay::daemon
