// The byte rings: free-running 64-bit positions, power-of-two sizes, and the sleep/wake
// handshake: positions and flags are sequentially consistent (publish my position, then read
// the peer's flag; set my flag, then read the peer's position), so a write is never missed by
// a reader that went to sleep, nor room by a writer that waits. (No fences: ThreadSanitizer
// does not model them.)
#include "common/shm_ring.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/raw_close.h"

namespace iorelay {
namespace {

Status Corrupt() { return Status::FromErrno(EPROTO, "shared-memory ring position out of range"); }

}  // namespace

Result<uint64_t> ShmRingWriter::Room() {
  const uint64_t head = ctl_->head.load(std::memory_order_seq_cst);
  const uint64_t used = tail_ - head;  // (wraps to a huge value when head is ahead of tail_)
  if (used > size_) return Corrupt();
  return size_ - used;
}

Result<size_t> ShmRingWriter::Write(const struct iovec* iov, int count) {
  Result<uint64_t> room = Room();
  if (!room.ok()) return room.status();
  uint64_t left = *room;
  size_t taken = 0;
  for (int i = 0; i < count && left > 0; ++i) {
    const auto* src = static_cast<const uint8_t*>(iov[i].iov_base);
    size_t len = static_cast<size_t>(std::min<uint64_t>(iov[i].iov_len, left));
    while (len > 0) {
      const uint64_t at = tail_ & (size_ - 1);
      const size_t run = static_cast<size_t>(std::min<uint64_t>(len, size_ - at));
      std::memcpy(data_ + at, src, run);
      src += run;
      len -= run;
      tail_ += run;
      taken += run;
      left -= run;
    }
  }
  if (taken > 0) ctl_->tail.store(tail_, std::memory_order_seq_cst);
  return taken;
}

uint8_t* ShmRingWriter::Reserve(size_t n) {
  Result<uint64_t> room = Room();
  if (!room.ok() || *room < n) return nullptr;
  return data_ + (tail_ & (size_ - 1));
}

void ShmRingWriter::Commit(size_t m) {
  tail_ += m;
  ctl_->tail.store(tail_, std::memory_order_seq_cst);
}

bool ShmRingWriter::ReaderNeedsWake() {
  return ctl_->reader_waiting.load(std::memory_order_seq_cst) != 0 &&
         ctl_->reader_waiting.exchange(0, std::memory_order_seq_cst) != 0;
}

Result<bool> ShmRingWriter::PrepareToWait() {
  ctl_->writer_waiting.store(1, std::memory_order_seq_cst);
  Result<uint64_t> room = Room();
  if (!room.ok()) return room.status();
  return *room == 0;
}

Result<uint64_t> ShmRingReader::Available() {
  const uint64_t tail = ctl_->tail.load(std::memory_order_seq_cst);
  const uint64_t avail = tail - head_;
  if (avail > size_) return Corrupt();
  return avail;
}

Result<size_t> ShmRingReader::ReadV(const struct iovec* iov, int count, bool mark_when_short) {
  size_t want = 0;
  for (int i = 0; i < count; ++i) want += iov[i].iov_len;
  size_t got = 0;
  int i = 0;
  size_t in_iov = 0;  // bytes of iov[i] filled
  for (;;) {
    Result<uint64_t> avail = Available();
    if (!avail.ok()) return avail.status();
    uint64_t left = *avail;
    while (left > 0 && i < count) {
      auto* dst = static_cast<uint8_t*>(iov[i].iov_base) + in_iov;
      const uint64_t at = head_ & (size_ - 1);
      const size_t run =
          static_cast<size_t>(std::min<uint64_t>({left, iov[i].iov_len - in_iov, size_ - at}));
      std::memcpy(dst, data_ + at, run);
      head_ += run;
      got += run;
      left -= run;
      in_iov += run;
      if (in_iov == iov[i].iov_len) {
        ++i;
        in_iov = 0;
      }
    }
    if (got > 0) Publish();
    if (got == want || !mark_when_short) return got;
    Result<bool> sleep = PrepareToSleep();
    if (!sleep.ok()) return sleep.status();
    if (*sleep) return got;
  }
}

void ShmRingReader::Publish() {
  if (lending_ == nullptr) {
    ctl_->head.store(head_, std::memory_order_seq_cst);
    return;
  }
  MutexLock lock(lending_->mu);
  lending_->head = head_;
  ctl_->head.store(lending_->lent.empty() ? head_ : lending_->lent.front().first,
                   std::memory_order_seq_cst);
}

void ShmRingReader::EnableLending() { lending_ = std::make_unique<Lending>(); }

Result<std::optional<uint64_t>> ShmRingReader::Borrow(size_t n) {
  Result<uint64_t> avail = Available();
  if (!avail.ok()) return avail.status();
  if (*avail < n || n == 0) return std::optional<uint64_t>();
  const uint64_t start = head_;
  {
    MutexLock lock(lending_->mu);
    // The writer gets no room back behind a lent run until it is returned, so lending stops at
    // half the ring: the other half keeps the client's next requests flowing meanwhile.
    const uint64_t held = lending_->lent.empty() ? 0 : head_ - lending_->lent.front().first;
    if (held + n > size_ / 2) return std::optional<uint64_t>();
    lending_->lent.emplace_back(start, false);
  }
  head_ += n;
  Publish();
  return std::optional<uint64_t>(start);
}

bool ShmRingReader::Return(uint64_t position) {
  {
    MutexLock lock(lending_->mu);
    auto& lent = lending_->lent;
    for (auto& run : lent) {
      if (run.first == position) run.second = true;
    }
    if (lent.empty() || !lent.front().second) return false;  // the room is not the writer's yet
    while (!lent.empty() && lent.front().second) lent.pop_front();
    ctl_->head.store(lent.empty() ? lending_->head : lent.front().first, std::memory_order_seq_cst);
  }
  return WriterNeedsWake();
}

Result<size_t> ShmRingReader::Read(void* buf, size_t n, bool mark_when_short) {
  struct iovec v = {buf, n};
  return ReadV(&v, 1, mark_when_short);
}

Result<bool> ShmRingReader::PrepareToSleep() {
  ctl_->reader_waiting.store(1, std::memory_order_seq_cst);
  Result<uint64_t> avail = Available();
  if (!avail.ok()) return avail.status();
  return *avail == 0;
}

bool ShmRingReader::WriterNeedsWake() {
  return ctl_->writer_waiting.load(std::memory_order_seq_cst) != 0 &&
         ctl_->writer_waiting.exchange(0, std::memory_order_seq_cst) != 0;
}

Result<HostIdentity> ReadHostIdentity(pid_t pid) {
  HostIdentity id;
  const std::string ns =
      pid == 0 ? std::string("/proc/self/ns/net") : "/proc/" + std::to_string(pid) + "/ns/net";
  struct stat st;
  if (::syscall(SYS_newfstatat, AT_FDCWD, ns.c_str(), &st, 0) != 0) return Status::LastError(ns);
  id.netns_dev = st.st_dev;
  id.netns_ino = st.st_ino;
  const char* boot = "/proc/sys/kernel/random/boot_id";
  long fd = ::syscall(SYS_openat, AT_FDCWD, boot, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::LastError(boot);
  char buf[64];
  long n = ::syscall(SYS_read, fd, buf, sizeof buf);
  RawClose(fd);
  if (n <= 0) return Status::IOError(std::string("reading ") + boot);
  id.boot_id.assign(buf, static_cast<size_t>(n));
  while (!id.boot_id.empty() && (id.boot_id.back() == '\n' || id.boot_id.back() == ' ')) {
    id.boot_id.pop_back();
  }
  return id;
}

// Raw system calls: in the interposer, read and write name its own wrappers.
void RingDoorbell(int eventfd) {
  uint64_t one = 1;
  [[maybe_unused]] long r = ::syscall(SYS_write, eventfd, &one, sizeof one);
}

// Process-shared futexes (no FUTEX_PRIVATE_FLAG): the flag lives in a MAP_SHARED memfd
// mapped by both processes, so the kernel keys it by the file page, not by the address.
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

void WakeFlag(std::atomic<uint32_t>* flag) {
  [[maybe_unused]] long r =
      ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(flag), FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

void SleepOnFlag(std::atomic<uint32_t>* flag, int timeout_ms) {
  struct timespec t = {timeout_ms / 1000, static_cast<long>(timeout_ms % 1000) * 1000000};
  [[maybe_unused]] long r = ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(flag), FUTEX_WAIT, 1u,
                                      timeout_ms < 0 ? nullptr : &t, nullptr, 0);
}

}  // namespace iorelay
