// The daemon's end of a shared-memory connection: two byte rings in a sealed memfd, a doorbell
// each way (an eventfd to the daemon, a futex in the shared page to the client), and the
// authenticated Unix socket kept only to learn when the client goes. It is a Connection like a
// socket, so the event loop, the frame reader and the reply queue serve it unchanged; the doorbell
// is its PollFd, the socket its side channel's AuxPollFd. In place data and pipes are
// capabilities it has when they could be set up (transport.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "common/shm_ring.h"
#include "daemon/pipe_pool.h"
#include "daemon/transport.h"

namespace iorelay::daemon {

class ShmConnection final : public Connection,
                            private InPlaceData,
                            private SideChannel,
                            private PipedData {
 public:
  // Rings of `ring_bytes` each (a power of two in [kShmMinRingBytes, kShmMaxRingBytes]): a
  // memfd sealed against resizing (a client cannot truncate it under the daemon), mapped, and
  // the daemon's non-blocking eventfd doorbell. `open_count` (may be null) counts live
  // shared-memory connections. With `in_place`, the rings are mapped so that data can stay in them
  // (Borrow, Reserve). With `pipe_bytes` > 0, a pipe each way for piped data, whose requests
  // may span pipe_bytes of pages (without pipes when the kernel refuses them).
  static Result<std::unique_ptr<ShmConnection>> Create(uint64_t ring_bytes, bool in_place,
                                                       size_t pipe_bytes,
                                                       std::atomic<uint64_t>* open_count);
  ~ShmConnection() override;

  // Sends `frame` (the attach reply) on `socket` with the memfd, the daemon's doorbell and the
  // client's ends of the pipes as SCM_RIGHTS, then takes the socket over. On failure the socket
  // is left to the caller.
  Status HandOver(std::unique_ptr<Connection>& socket, const uint8_t* frame, size_t len);

  Result<size_t> Recv(void* buf, size_t n) override;
  Result<size_t> SendSome(const struct iovec* iov, int iovcnt) override;
  void Shutdown() override;
  int PollFd() const override { return daemon_bell_; }
  std::string peer() const override;
  // In place when the rings are mapped twice; pipes when the kernel gave them.
  Capabilities capabilities() override;
  // For `us` microseconds after a Recv that took bytes, Recv does not arm the doorbell when it
  // finds the ring short: the loop polls the ring instead (Polling), so a client that sends its
  // next request meanwhile need not ring (an eventfd write) nor the loop wake (docs/daemon.md,
  // "Polling instead of sleeping"). 0: always armed. A poll that ends with no request makes the
  // next 2^k - 1 requests (k the misses in a row, at most 6) arm the doorbell at once.
  void set_poll_us(int us) { poll_ns_ = int64_t{us} * 1000; }

  uint64_t ring_bytes() const { return ring_bytes_; }
  // Pages a piped request's data may span (0: no pipes).
  uint32_t pipe_pages() const { return pipe_pages_; }

 private:
  // The rings' memory and what a lent run of request bytes needs to be given back; shared by
  // the connection and the data it lends (a queued write can outlive its connection).
  struct Mapping;
  class Lease;

  ShmConnection() = default;

  // InPlaceData
  Buffer Borrow(size_t n) override;
  uint8_t* Reserve(size_t n) override;
  void CommitReserved(size_t m) override;
  // SideChannel
  int AuxPollFd() const override { return socket_ ? socket_->PollFd() : -1; }
  void OnAuxEvent() override;
  bool HungUp() const override { return hung_up_.load() || violated_.load(); }
  bool Polling() const override { return polling_; }
  bool SignalAlive() override;
  // PipedData
  int PipeFromClient() const override { return from_client_.read_fd(); }
  int PipeToClient() const override { return to_client_.write_fd(); }
  std::mutex* PipeLock() override { return &pipe_mu_; }

  void MakePipes(size_t pipe_bytes);
  // After a reply: wakes the client when it said it sleeps, and remembers whether it did (the
  // poll's hint: a client found asleep does not spin for its replies).
  void NoteReplyWake(bool asleep);

  std::unique_ptr<Connection> socket_;
  std::shared_ptr<Mapping> map_;
  uint64_t ring_bytes_ = 0;
  int memfd_ = -1;        // closed once handed over
  int daemon_bell_ = -1;  // the client rings it: requests written, or room made for replies
  ShmRingWriter out_;     // daemon → client (under the connection's send lock)
  Pipe from_client_;      // the client writes the data of piped writes
  Pipe to_client_;        // the daemon splices the data of piped reads
  // A std::mutex, not an annotated Mutex (common/mutex.h): it guards no member, only the order
  // of bytes in to_client_, and is taken with a timed try (data_ops.cc, LockWithin).
  std::mutex pipe_mu_;
  uint32_t pipe_pages_ = 0;
  std::atomic<bool> hung_up_{false};
  std::atomic<bool> violated_{false};  // the client wrote on the socket after the switch
  std::atomic<bool> shut_{false};
  std::atomic<uint64_t>* open_count_ = nullptr;
  int64_t poll_ns_ = 0;
  // The event loop's (Recv's thread's) alone:
  int64_t last_request_ns_ = 0;  // when Recv last took bytes
  bool polling_ = false;         // the last short Recv left the doorbell unarmed
  // The poll's back-off (--shm-poll-us): polls in a row that no request ended, and requests
  // left that are answered without a poll after them; whether the last short Recv armed the
  // doorbell (the next bytes rang it).
  static constexpr unsigned kMaxPollMisses = 6;
  unsigned poll_misses_ = 0;
  unsigned skip_polls_ = 0;
  bool rung_ = false;
  // The last reply found the client asleep (written by the replying thread, under the
  // connection's send lock; read by the loop).
  std::atomic<bool> client_slept_{false};
};

}  // namespace iorelay::daemon
