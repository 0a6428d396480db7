// Counters per application and in total (requests, bytes, errors, queue and service time,
// by op family): what kStats returns and what the daemon prints at exit.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "proto/messages.h"

namespace iorelay::daemon {

enum class Family : uint8_t { kRead, kWrite, kMetadata, kLock };
inline constexpr int kFamilies = 4;
Family FamilyOf(proto::Op op);

struct FamilyCounters {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> queue_ns{0};
  std::atomic<uint64_t> service_ns{0};
};

// Lock-free: every field is a relaxed atomic.
struct AppStats {
  explicit AppStats(std::string n) : name(std::move(n)) {}
  const std::string name;
  FamilyCounters family[kFamilies];
  std::atomic<uint64_t> bytes_read{0};
  std::atomic<uint64_t> bytes_written{0};
};

class Stats {
 public:
  // One AppStats per credential name; the set never changes afterwards.
  explicit Stats(const std::vector<std::string>& app_names);
  AppStats* app(size_t index) { return apps_[index].get(); }

  static void Record(AppStats* app, Family family, int error, uint64_t bytes_read,
                     uint64_t bytes_written, int64_t queue_ns, int64_t service_ns);

  // {"total": {...}, "apps": {"name": {...}}}; each with requests, errors, bytes_read,
  // bytes_written, queue_time_ns, service_time_ns and "by_family".
  nlohmann::json ToJson() const;

 private:
  std::vector<std::unique_ptr<AppStats>> apps_;
};

}  // namespace iorelay::daemon
