// One authenticated socket to a daemon and its blocking round trips. Every wait is a poll
// bounded by the liveness timeout; any byte from the daemon (a heartbeat too) resets it.
#pragma once

#include <sys/uio.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "client/address.h"
#include "client/shm_channel.h"
#include "client/spin_wait.h"
#include "common/auth.h"
#include "common/frame_mac.h"
#include "common/status.h"
#include "proto/messages.h"

namespace iorelay::client {

// Who this process is, as told to the daemon in kAuth.
struct Identity {
  uint32_t pid = 0;
  uint32_t node_id = 0;
  std::string host;
};

// The session a connection belongs to (from AuthReply).
struct SessionInfo {
  uint64_t session = 0;
  uint64_t token = 0;
  std::string app;
  uint32_t heartbeat_ms = 0;
  uint32_t max_io_bytes = 0;
  // Client-local: which incarnation of the session (a restarted daemon may reuse ids).
  uint64_t generation = 0;
};

// Caller buffers for bulk data: sent straight from them, received straight into them.
struct IoSpan {
  const struct iovec* iov = nullptr;
  int count = 0;
  size_t Bytes() const;
};

// A reply that arrived: the daemon's errno (0: success) and the payload length.
struct ReplyInfo {
  int32_t status = 0;
  size_t payload_bytes = 0;
  uint16_t version = 0;  // the daemon's protocol version (frame header)
};

// One request of a pipelined batch (Connection::Pipeline) and, once answered, its reply.
struct Exchange {
  proto::Op op = proto::Op::kPing;
  std::span<const uint8_t> fields;
  IoSpan tx{};                              // data sent after the fields
  IoSpan rx{};                              // where a successful reply's data goes
  std::vector<uint8_t>* payload = nullptr;  // else the reply's payload goes here (may be null)
  ReplyInfo reply;                          // filled when answered
  bool answered = false;
  // Set when sent: the data went (or comes back) through the shared-memory pipes, as
  // kPwritePiped or kPreadPiped (docs/interposer.md, Shared memory).
  bool piped = false;
};

class Connection {
 public:
  // Connects and authenticates: a new session (join_session 0) or a join of an existing one.
  // Transport failures give EIO; a refused credential or join gives the daemon's errno.
  // `spin_us`: how long a wait for a reply from a daemon of this host first looks for it
  // (IORELAY_SPIN_US, client/spin_wait.h); not over TCP. `seal`: over TCP, require tags on
  // every frame (IORELAY_SEAL; off only to measure their cost against `iorelayd --seal off`).
  static Result<std::unique_ptr<Connection>> Open(const Address& addr, const Secret& secret,
                                                  const Identity& who, uint64_t join_session,
                                                  uint64_t join_token, int timeout_ms,
                                                  int spin_us = 0, bool seal = true);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends one request (fields, then `tx` as its tail) and waits for its reply. A successful
  // reply's payload goes into `rx` when given (it must fit), else into `payload`. A failed
  // Status (EIO) means the transport failed; the connection is then broken() for good.
  Result<ReplyInfo> RoundTrip(proto::Op op, std::span<const uint8_t> fields, IoSpan tx,
                              std::vector<uint8_t>* payload, IoSpan rx);

  // Several requests with at most `window` of them outstanding: the daemon works on one while
  // the next ones arrive, and the replies are taken in whatever order they come. A failed
  // Status (EIO) means the transport failed (the connection is broken): the requests not
  // `answered` may or may not have been carried out.
  Status Pipeline(std::span<Exchange> batch, size_t window);

  // One request in flight across calls (iorelay_submit_*): Start sends it and returns its id;
  // ReplyArrived tells, without blocking, whether a reply is waiting (heartbeats skipped);
  // Finish receives its reply into `e`. Nothing else may use the connection in between.
  Result<uint64_t> Start(Exchange& e);
  Result<bool> ReplyArrived();
  Status Finish(Exchange& e, uint64_t id);

  // Sends one request without waiting for its reply; a later RoundTrip drops that reply when
  // it arrives. A failed Status (EIO) means the transport failed.
  Status Post(proto::Op op, std::span<const uint8_t> fields);

  // Into `pad`, the kPad frame that makes data sent after `before_data` bytes from stream
  // `position` start at a multiple of kShmDataAlign (nothing when it already does), so the
  // daemon can write it in place even with O_DIRECT.
  static void PadBeforeData(uint64_t position, size_t before_data, std::vector<uint8_t>* pad);

  const SessionInfo& session() const { return session_; }
  bool broken() const { return broken_; }
  // The failure was the peer going away (reset, EOF, refused), not a timeout.
  bool peer_gone() const { return peer_gone_; }
  int fd() const { return fd_; }
  // Whether `fd` is one of this connection's descriptors (socket, shared-memory doorbell),
  // and its replacement after the interposer moved it.
  bool UsesFd(int fd) const { return fd == fd_ || (shm_ && shm_->UsesFd(fd)); }
  void ReplaceFd(int old_fd, int new_fd);
  // The connection's frames travel through shared memory (docs/interposer.md).
  bool shared_memory() const { return shm_ != nullptr; }
  void set_generation(uint64_t g) { session_.generation = g; }
  // Fork child: forget the socket without sending anything (raw close).
  void Abandon();

 private:
  Connection(int fd, int timeout_ms) : fd_(fd), timeout_ms_(timeout_ms) {}
  Status Handshake(const Secret& secret, const Identity& who, uint64_t join_session,
                   uint64_t join_token, bool seal);
  // After the handshake on a Unix socket: asks the daemon to move to shared memory. Ok when
  // it did, or refused (the connection stays on its socket); an error breaks the connection.
  Status AttachShm();
  // The socket calls, or their shared-memory stand-ins (-1 with errno, as the syscalls).
  ssize_t RawRecv(struct iovec* iov, int count);
  ssize_t RawSend(struct iovec* iov, int count);
  Status Send(proto::Op op, uint64_t id, std::span<const uint8_t> fields, IoSpan tx);
  // Sends `e` as it is, or as its piped form when its data is large enough and fits the pipes.
  Status SendExchange(Exchange& e, uint64_t id);
  // The bytes of `e`'s data to go through the pipes (0: none, it goes as it is).
  size_t PipedBytes(const Exchange& e) const;
  // All of `tx` into the pipe to the daemon (referenced, not copied), waiting for room.
  Status PipeOut(IoSpan tx);
  // Exactly `bytes` from the pipe from the daemon into `iov` (they are there before their frame).
  Status PipeIn(const struct iovec* iov, int count, size_t bytes);
  // A piped read's reply of `length` payload bytes (its fields, then the tail) into e.rx, after
  // the bytes the fields say are in the pipe; the count read.
  Result<size_t> ReceivePiped(Exchange& e, size_t length);
  static proto::Op WireOp(const Exchange& e);
  // Receives replies (skipping heartbeats and the replies of posted requests) until one of
  // `inflight` (whose ids are `ids`) is answered; returns its index.
  Result<size_t> Receive(std::span<Exchange* const> inflight, std::span<const uint64_t> ids);
  // Makes at least `min` bytes available in rbuf_, receiving at most `max` in total.
  Status Fill(size_t min, size_t max);
  // Receives exactly the iov's bytes (after draining rbuf_ into it).
  Status ReceiveInto(struct iovec* iov, int count, size_t bytes);
  Status WaitFor(short events);
  // Before a wait for replies sleeps: looks for them for up to IORELAY_SPIN_US (SpinWait);
  // true when they came.
  bool SpinForReply();
  // After one non-blocking receive that returned n: renews the deadline on progress, waits
  // for data on EAGAIN, fails the connection when the daemon is gone or the call failed.
  Status AfterReceive(ssize_t n);
  Status Fail(Status s, bool peer_gone);

  std::atomic<int> fd_;  // atomic: iorelay_move_internal_fd may change it
  int timeout_ms_;
  SpinWait spin_;            // for replies (IORELAY_SPIN_US)
  int64_t deadline_ms_ = 0;  // liveness: reset by every byte received
  uint64_t next_id_ = 1;
  bool broken_ = false;
  bool over_network_ = false;  // TCP: sealing is required unless IORELAY_SEAL=off
  bool peer_gone_ = false;
  SessionInfo session_;
  std::vector<uint64_t> unawaited_;  // ids of posted requests whose replies are to be dropped
  // Set when the daemon seals the connection (AuthReply.sealed): tags for what this side
  // sends, and for what it receives.
  std::optional<FrameSealer> send_seal_, recv_seal_;
  std::vector<uint8_t> sbuf_;        // header and fields of the request being sent
  std::vector<uint8_t> pbuf_;        // a kPad frame sent before them (shared memory)
  std::unique_ptr<ShmChannel> shm_;  // set when the daemon moved this connection
  std::array<uint8_t, 512> rbuf_{};
  size_t rpos_ = 0, rend_ = 0;
};

}  // namespace iorelay::client
