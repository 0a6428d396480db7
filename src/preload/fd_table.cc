// The forwarded-descriptor table: mutations and counted references under one mutex,
// membership tests lock-free.
#include "preload/fd_table.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace iorelay::preload {

bool FdTable::Init(size_t capacity) {
  if (capacity == 0) return false;
  size_t bytes = capacity * sizeof(std::atomic<FdEntry*>);
  // syscall(): this must not recurse into the interposer's mmap wrapper.
  void* p = reinterpret_cast<void*>(syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE,
                                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (p == MAP_FAILED) return false;
  // Anonymous memory is zero: every slot starts as a null pointer.
  slots_ = static_cast<std::atomic<FdEntry*>*>(p);
  capacity_ = capacity;
#if defined(__SANITIZE_ADDRESS__)
  // LeakSanitizer does not scan private mappings: show it the entries the slots own.
  __lsan_register_root_region(p, bytes);
#endif
  return true;
}

FdTable::Ref FdTable::Acquire(int fd) {
  if (fd < 0 || static_cast<size_t>(fd) >= capacity_) return {};
  iorelay::MutexLock lock(mu_);
  FdEntry* e = slots_[fd].load(std::memory_order_acquire);
  if (e == nullptr) return {};
  e->refs.fetch_add(1, std::memory_order_relaxed);
  return Ref(this, e);
}

FdEntry* FdTable::Install(int fd, FdEntry* e) {
  iorelay::MutexLock lock(mu_);
  if (static_cast<size_t>(fd) + 1 > high_water_) high_water_ = static_cast<size_t>(fd) + 1;
  return slots_[fd].exchange(e, std::memory_order_acq_rel);
}

FdEntry* FdTable::Remove(int fd) {
  if (fd < 0 || static_cast<size_t>(fd) >= capacity_) return nullptr;
  iorelay::MutexLock lock(mu_);
  return slots_[fd].exchange(nullptr, std::memory_order_acq_rel);
}

int FdTable::Release(FdEntry* e) {
  if (e == nullptr) return 0;
  if (e->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return 0;
  if (releaser_ != nullptr) return releaser_(e);
  delete e;
  return 0;
}

std::vector<int> FdTable::ListInRange(unsigned first, unsigned last) {
  std::vector<int> out;
  iorelay::MutexLock lock(mu_);
  size_t end = high_water_;
  if (static_cast<size_t>(last) + 1 < end) end = static_cast<size_t>(last) + 1;
  for (size_t fd = first; fd < end; ++fd) {
    if (slots_[fd].load(std::memory_order_relaxed) != nullptr) out.push_back(static_cast<int>(fd));
  }
  return out;
}

}  // namespace iorelay::preload
