#include "daemon/app_inflight.h"

#include <utility>
#include <vector>

namespace iorelay::daemon {

void AppInflight::Sub(uint64_t n) {
  const uint64_t now = bytes_.fetch_sub(n) - n;
  // (Still over: no lock taken, so an application held over its limit does not serialise its
  // answers on mu_.)
  if (parked_count_.load() == 0 || now > limit_.load()) return;
  std::vector<std::function<void()>> wakes;
  {
    MutexLock lock(mu_);
    for (auto& [key, wake] : parked_) wakes.push_back(std::move(wake));
    parked_.clear();
    parked_count_.store(0);
  }
  for (const auto& wake : wakes) wake();  // (outside the lock: a wake takes the loop's lock)
}

bool AppInflight::AddUnlessOver(uint64_t n, uint64_t limit) {
  uint64_t bytes = bytes_.load();
  while (bytes <= limit) {
    if (bytes_.compare_exchange_weak(bytes, bytes + n)) {
      RaisePeak(bytes + n);
      return true;
    }
  }
  return false;
}

void AppInflight::Park(const void* key, uint64_t limit, std::function<void()> wake) {
  MutexLock lock(mu_);
  limit_.store(limit);
  parked_[key] = std::move(wake);
  parked_count_.store(parked_.size());
}

void AppInflight::Unpark(const void* key) {
  if (parked_count_.load() == 0) return;
  MutexLock lock(mu_);
  parked_.erase(key);
  parked_count_.store(parked_.size());
}

size_t AppInflight::parked() const { return parked_count_.load(); }

}  // namespace iorelay::daemon
