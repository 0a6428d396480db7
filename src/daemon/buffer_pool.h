// 4096-aligned data buffers, recycled: write payloads are received into them and reads
// land in them, so O_DIRECT works and the hot path does not allocate.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "common/mutex.h"

namespace iorelay::daemon {

inline constexpr size_t kBufferAlign = 4096;

// What owns the memory of a Buffer that lends it (bytes left in place in a shared-memory
// ring): the Buffer does not free that memory, and destroying the lease gives it back.
class BufferLease {
 public:
  virtual ~BufferLease() = default;
};

class Buffer {
 public:
  Buffer() = default;
  Buffer(void* p, size_t cap) : data_(static_cast<char*>(p)), capacity_(cap) {}
  Buffer(void* p, size_t cap, std::unique_ptr<BufferLease> lease)
      : data_(static_cast<char*>(p)), capacity_(cap), lease_(std::move(lease)) {}
  Buffer(Buffer&& o) noexcept
      : data_(o.data_), capacity_(o.capacity_), lease_(std::move(o.lease_)) {
    o.data_ = nullptr;
    o.capacity_ = 0;
  }
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(capacity_, o.capacity_);
    std::swap(lease_, o.lease_);
    return *this;
  }
  ~Buffer() {
    if (lease_ == nullptr) std::free(data_);
  }
  char* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  // Lent memory (not from the pool, not aligned): see BufferLease.
  bool leased() const { return lease_ != nullptr; }
  // Gives up an owned buffer's memory (never a leased one's).
  char* release() {
    char* p = data_;
    data_ = nullptr;
    capacity_ = 0;
    return p;
  }

 private:
  char* data_ = nullptr;
  size_t capacity_ = 0;
  std::unique_ptr<BufferLease> lease_;
};

// Bytes of buffers that some holders keep, now and at most since the start (a statistic: the
// frame readers' buffers of data still arriving). Thread-safe.
class ByteGauge {
 public:
  void Add(uint64_t n) {
    const uint64_t now = now_.fetch_add(n, std::memory_order_relaxed) + n;
    uint64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  void Sub(uint64_t n) { now_.fetch_sub(n, std::memory_order_relaxed); }
  uint64_t now() const { return now_.load(std::memory_order_relaxed); }
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> now_{0};
  std::atomic<uint64_t> peak_{0};
};

// Thread-safe. Keeps a few free buffers per power-of-two size up to 1 MiB.
class BufferPool {
 public:
  ~BufferPool();
  // A buffer of at least `n` bytes (n may be 0); empty Buffer when memory is exhausted.
  Buffer Get(size_t n);
  void Put(Buffer b);

 private:
  static constexpr int kClasses = 9;  // 4 KiB .. 1 MiB
  static constexpr size_t kKeepPerClass = 64;
  Mutex mu_;
  std::vector<char*> free_[kClasses] GUARDED_BY(mu_);
};

}  // namespace iorelay::daemon
