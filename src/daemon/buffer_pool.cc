// BufferPool: size classes of aligned_alloc'ed buffers.
#include "daemon/buffer_pool.h"

namespace iorelay::daemon {
namespace {

int ClassOf(size_t cap) {
  int c = 0;
  size_t size = kBufferAlign;
  while (size < cap) {
    size <<= 1;
    ++c;
  }
  return c;
}

// A few buffers per thread and size class in front of the shared lists, so the common
// case (a reader receives a write and runs it inline) takes no lock.
constexpr int kLocalClasses = 2;  // 4 KiB and 8 KiB
constexpr size_t kLocalKeep = 4;
struct LocalCache {
  std::vector<char*> free[kLocalClasses];
  ~LocalCache() {
    for (auto& list : free) {
      for (char* p : list) std::free(p);
    }
  }
};
thread_local LocalCache t_cache;

}  // namespace

BufferPool::~BufferPool() {
  for (auto& list : free_) {
    for (char* p : list) std::free(p);
  }
}

Buffer BufferPool::Get(size_t n) {
  int c = ClassOf(n == 0 ? 1 : n);
  size_t cap = kBufferAlign << c;
  if (c < kLocalClasses && !t_cache.free[c].empty()) {
    char* p = t_cache.free[c].back();
    t_cache.free[c].pop_back();
    return Buffer(p, cap);
  }
  if (c < kClasses) {
    MutexLock lock(mu_);
    if (!free_[c].empty()) {
      char* p = free_[c].back();
      free_[c].pop_back();
      return Buffer(p, cap);
    }
  } else {
    cap = (n + kBufferAlign - 1) / kBufferAlign * kBufferAlign;
  }
  void* p = std::aligned_alloc(kBufferAlign, cap);
  if (p == nullptr) return Buffer();
  return Buffer(p, cap);
}

void BufferPool::Put(Buffer b) {
  if (b.data() == nullptr || b.leased()) return;  // (a lease is given back by ~Buffer)
  int c = ClassOf(b.capacity());
  if (c >= kClasses || (kBufferAlign << c) != b.capacity()) return;  // freed by ~Buffer
  if (c < kLocalClasses && t_cache.free[c].size() < kLocalKeep) {
    t_cache.free[c].push_back(b.release());
    return;
  }
  MutexLock lock(mu_);
  if (free_[c].size() < kKeepPerClass) free_[c].push_back(b.release());
}

}  // namespace iorelay::daemon
