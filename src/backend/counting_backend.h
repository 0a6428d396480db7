// Counts the calls a daemon makes to its backend, by name: the "backend calls out" that
// `iorelay stats` shows next to the requests in, at every hop (for a relay, the requests it
// sent upstream).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/forwarding_backend.h"

namespace iorelay::backend {

class CountingBackend : public ForwardingBackend {
 public:
  explicit CountingBackend(std::unique_ptr<Backend> inner) : ForwardingBackend(std::move(inner)) {}

  // (call name, count) for every call made at least once, in a fixed order.
  std::vector<std::pair<std::string, uint64_t>> Counts() const {
    std::vector<std::pair<std::string, uint64_t>> out;
    for (size_t i = 0; i < kNames.size(); ++i) {
      uint64_t n = counts_[i].load(std::memory_order_relaxed);
      if (n > 0) out.emplace_back(kNames[i], n);
    }
    return out;
  }

 protected:
  void BeforeCall(const char* call) override {
    // Data calls first: they are most of the traffic.
    for (size_t i = 0; i < kNames.size(); ++i) {
      if (std::strcmp(kNames[i], call) == 0) {
        counts_[i].fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
    // direct_io_alignment (a property, asked once per open) is not counted.
  }

 private:
  static constexpr std::array<const char*, 26> kNames = {
      "pwritev",   "preadv",   "pwrite",   "pread",     "splice_write", "splice_read", "open",
      "close",     "fsync",    "fstat",    "ftruncate", "fallocate",    "fstatfs",     "seek",
      "set_flags", "read_dir", "stat",     "statfs",    "access",       "unlink",      "mkdir",
      "rmdir",     "rename",   "truncate", "chmod",     "readlink"};
  std::array<std::atomic<uint64_t>, kNames.size()> counts_{};
};

}  // namespace iorelay::backend
