// Pointers the interposer handed to the application (DIR*, FILE*, aiocb*), so that a
// wrapper taking such a pointer tells the interposer's from libc's. Lock-free when
// empty, which keeps readdir/fileno/aio_error cheap for programs that forward nothing.
#pragma once

#include <atomic>
#include <unordered_map>

#include "common/mutex.h"

namespace iorelay::preload {

class PtrRegistry {
 public:
  constexpr PtrRegistry() = default;

  bool MaybeContains() const { return count_.load(std::memory_order_acquire) != 0; }

  void Add(const void* key, void* value) {
    iorelay::MutexLock lock(mu_);
    if (map_ == nullptr) map_ = new std::unordered_map<const void*, void*>;
    if (map_->insert_or_assign(key, value).second) count_.fetch_add(1, std::memory_order_release);
  }
  // The value stored for key, or null.
  void* Find(const void* key) {
    if (!MaybeContains()) return nullptr;
    iorelay::MutexLock lock(mu_);
    auto it = map_->find(key);
    return it == map_->end() ? nullptr : it->second;
  }
  // Removes key; returns its value, or null.
  void* Erase(const void* key) {
    if (!MaybeContains()) return nullptr;
    iorelay::MutexLock lock(mu_);
    auto it = map_->find(key);
    if (it == map_->end()) return nullptr;
    void* v = it->second;
    map_->erase(it);
    count_.fetch_sub(1, std::memory_order_release);
    return v;
  }

  void LockForFork() ACQUIRE(mu_) { mu_.Lock(); }
  void UnlockAfterFork() RELEASE(mu_) { mu_.Unlock(); }

 private:
  Mutex mu_;
  std::atomic<size_t> count_{0};
  std::unordered_map<const void*, void*>* map_ GUARDED_BY(mu_) = nullptr;  // never freed
};

// Defined in state.cc; locked across fork with the descriptor table.
extern PtrRegistry g_dirs;    // ForwardedDir* → itself
extern PtrRegistry g_files;   // cookie FILE* → its StdioCookie*
extern PtrRegistry g_aiocbs;  // completed forwarded aiocb* → (void*)1

}  // namespace iorelay::preload
