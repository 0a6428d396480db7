// The shared-memory transport's layout and its two byte rings (client → daemon, daemon →
// client) in one memfd mapped by both processes. Each ring is a single-producer,
// single-consumer byte stream carrying the same frames as a socket; each side keeps its own
// position privately and only publishes it, so a peer scribbling the shared page can make the
// stream wrong but never make the other side read or write outside the mapping.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "common/mutex.h"
#include "common/status.h"

namespace iorelay {

inline constexpr uint64_t kShmMagic = 0x69726c7973686d31ull;  // "irlyshm1"
inline constexpr size_t kShmHeaderBytes = 4096;               // then the two rings' data
inline constexpr uint64_t kShmMinRingBytes = 64 * 1024;
inline constexpr uint64_t kShmMaxRingBytes = 64ull << 20;
// Data of at least this many bytes stays in the rings (the daemon writes a write's data from
// the requests' ring and reads a read's data into the replies' ring); the client pads the
// stream so that such a write's data starts at a multiple of kShmDataAlign in the ring (and so
// in both mappings, which are page-aligned), as O_DIRECT wants.
inline constexpr uint64_t kShmInPlaceMinBytes = 64 * 1024;
inline constexpr uint64_t kShmDataAlign = 4096;
// Piped data (docs/daemon.md, Piped data): a request's data of at least kPipeMinBytes may go
// through a pipe instead of a ring, when its memory spans at most the pages the daemon allows
// (ShmReply::pipe_pages: a pipe of kPipeBytes).
inline constexpr uint64_t kPipeMinBytes = 64 * 1024;
inline constexpr size_t kPipeBytes = 1u << 20;

// The size of a padding frame to put at stream (or memory) `position` so that data coming
// `before_data` bytes after the padding starts on a multiple of `align`: 0 when it already
// does, else at least `min_pad` (the padding frame's smallest encoding). The client pads its
// requests with it, the daemon its in-place O_DIRECT replies.
inline uint64_t ShmPadBytes(uint64_t position, uint64_t before_data, uint64_t min_pad,
                            uint64_t align) {
  if ((position + before_data) % align == 0) return 0;
  return min_pad + (align - (position + min_pad + before_data) % align) % align;
}

// One direction's control words, each on its own cache line.
struct ShmRingControl {
  alignas(64) std::atomic<uint64_t> tail;  // bytes ever written (the producer's)
  alignas(64) std::atomic<uint64_t> head;  // bytes ever read (the consumer's)
  // 1: the consumer found the ring empty and sleeps on its doorbell (set by it, cleared by the
  // producer when it rings).
  alignas(64) std::atomic<uint32_t> reader_waiting;
  // 1: the producer found the ring full and waits for room (set by it, cleared by the
  // consumer when it rings).
  std::atomic<uint32_t> writer_waiting;
};

struct ShmHeader {
  uint64_t magic;
  uint64_t ring_bytes;  // each ring's data size, a power of two
  ShmRingControl to_daemon;
  ShmRingControl to_client;
  // Raised by the daemon in place of a heartbeat frame while a reply it is writing in place
  // holds the replies' ring (no frame can pass it): the client counts a change as a sign of
  // life. (Added last: a client that does not know it reads the rest as before.)
  alignas(64) std::atomic<uint64_t> daemon_alive;
  // Set by the daemon when it ends the connection, before it wakes the client: a client that
  // marked itself asleep just before the wake-up sees it instead of sleeping a slice.
  std::atomic<uint32_t> daemon_closing;
};
static_assert(sizeof(ShmHeader) <= kShmHeaderBytes);
static_assert(std::atomic<uint64_t>::is_always_lock_free);

// The memfd's size for rings of `ring_bytes`.
inline size_t ShmMappingBytes(uint64_t ring_bytes) { return kShmHeaderBytes + 2 * ring_bytes; }

// The producer's end of one ring. Not thread-safe: one writer at a time.
class ShmRingWriter {
 public:
  ShmRingWriter() = default;
  ShmRingWriter(ShmRingControl* ctl, uint8_t* data, uint64_t size)
      : ctl_(ctl), data_(data), size_(size), tail_(ctl->tail.load(std::memory_order_relaxed)) {}

  // Copies as much of `iov` as fits and publishes it; returns the bytes taken (0: full; the
  // reader is then asked to ring when it makes room). EPROTO when the reader's published
  // position is impossible (the shared page was scribbled).
  Result<size_t> Write(const struct iovec* iov, int count);
  // After a Write that took bytes: whether the reader sleeps and must be rung (clears its
  // flag, so one ring per sleep).
  bool ReaderNeedsWake();
  // Before waiting for room: marks the writer as waiting; false when room appeared meanwhile.
  Result<bool> PrepareToWait();

  // In place, the daemon's end only (the ring's data mapped twice in a row, as for lending):
  // `n` contiguous bytes of room at the tail to be filled by the caller, or null when there is
  // not that much room now (or the reader's position is impossible). Commit then publishes the
  // first `m` <= n of them; nothing else is written in between.
  uint8_t* Reserve(size_t n);
  void Commit(size_t m);

  // Bytes ever written: the stream position of the next byte.
  uint64_t position() const { return tail_; }

 private:
  Result<uint64_t> Room();

  ShmRingControl* ctl_ = nullptr;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t tail_ = 0;  // private: never read back from the shared page
};

// The consumer's end of one ring. Not thread-safe: one reader at a time.
class ShmRingReader {
 public:
  ShmRingReader() = default;
  ShmRingReader(ShmRingControl* ctl, uint8_t* data, uint64_t size)
      : ctl_(ctl), data_(data), size_(size), head_(ctl->head.load(std::memory_order_relaxed)) {}

  // Copies up to `n` bytes out; EPROTO when the writer's published position is impossible.
  // With `mark_when_short`, a count below `n` means the ring was found empty after the reader
  // was marked as sleeping (the writer rings its doorbell on its next write), so the caller
  // may wait for the doorbell without missing a write (an edge-triggered event loop).
  Result<size_t> Read(void* buf, size_t n, bool mark_when_short);
  Result<size_t> ReadV(const struct iovec* iov, int count, bool mark_when_short);
  // Before waiting on the doorbell: marks the reader as sleeping; false when bytes arrived
  // meanwhile (then read instead of waiting).
  Result<bool> PrepareToSleep();
  // After a Read that took bytes: whether the writer waits for room and must be rung.
  bool WriterNeedsWake();
  // Whether bytes are there to read (a look at the writer's position, nothing checked).
  bool HasBytes() const { return ctl_->tail.load(std::memory_order_acquire) != head_; }

  // Lending, the daemon's end only: the ring's data must be mapped twice in a row (the second
  // mapping right after the first), so that any run of bytes is contiguous. Borrow then takes
  // `n` bytes in place instead of copying them out, and their room goes back to the writer only
  // when Return is called for them; until then the writer cannot overwrite them.
  void EnableLending();
  // The stream position of `n` bytes now taken in place (their bytes: At(position)), or
  // nullopt (nothing taken) when fewer than `n` are there, or when the bytes held back by
  // lending would then exceed half the ring. Called by the reading thread.
  Result<std::optional<uint64_t>> Borrow(size_t n);
  const uint8_t* At(uint64_t position) const { return data_ + (position & (size_ - 1)); }
  // Any thread: gives back the bytes lent at `position`. True when the writer waits for room
  // that this made (the caller rings it).
  bool Return(uint64_t position);

 private:
  // Bytes readable now; EPROTO when impossible.
  Result<uint64_t> Available();
  // Makes the bytes read so far room for the writer: up to head_, or with lending, up to the
  // first byte still lent.
  void Publish();

  // Lent runs, in stream order: start, and whether given back.
  struct Lending {
    Mutex mu;
    std::deque<std::pair<uint64_t, bool>> lent GUARDED_BY(mu);
    uint64_t head GUARDED_BY(mu) = 0;  // head_ as last published
  };

  ShmRingControl* ctl_ = nullptr;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t head_ = 0;  // private: never read back from the shared page
  std::unique_ptr<Lending> lending_;
};

// Where a process runs, as far as the shared-memory transport cares: the kernel's boot and the
// network namespace (a testbed's hosts are namespaces of one kernel, whose links must not be
// bypassed). Raw system calls only (safe inside the interposer).
struct HostIdentity {
  uint64_t netns_dev = 0;
  uint64_t netns_ino = 0;
  std::string boot_id;
};
// `pid` 0: this process; else that one's network namespace (boot id: this kernel's).
Result<HostIdentity> ReadHostIdentity(pid_t pid);

// The two doorbells. The client's to the daemon is an eventfd: the daemon only waits on it
// (edge-triggered, in its event loop) and never reads or writes it. The daemon's to the client
// is a futex on the flag the client sleeps on (ShmRingControl::reader_waiting of the replies'
// ring, writer_waiting of the requests' ring): the daemon clears the flag and wakes it, which
// never blocks, whatever the client does to the shared page. (An eventfd shared with the
// client could block: its non-blocking flag belongs to the open file description, which the
// client could clear and then fill the counter; a socket pair cannot, but costs a send and a
// poll and a read per wake-up.)
//
// Rings an eventfd doorbell (a failed write is ignored: the peer is gone or its counter is
// saturated, and either way it is awake).
void RingDoorbell(int eventfd);
// Wakes one sleeper on `flag` in the shared mapping (a process-shared futex). One: a flag has
// one sleeper (a connection is used by one thread at a time), and a client that parked
// thousands of threads on its flag would make a wake-all cost the daemon milliseconds.
void WakeFlag(std::atomic<uint32_t>* flag);
// Sleeps while `*flag` is 1, at most `timeout_ms` (negative: no limit; a wake-up, a change of
// the flag, a signal or the time ends it; the caller looks at the flag and the ring again).
void SleepOnFlag(std::atomic<uint32_t>* flag, int timeout_ms);

}  // namespace iorelay
