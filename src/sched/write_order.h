// Keeps overlapping writes in arrival order around any algorithm: a write that overlaps an
// earlier write not yet released is held back until that one is released, so the later
// write wins, as on a local file system. The registry wraps every scheduler with it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sched/scheduler.h"

namespace iorelay::sched {

// Writes with mergeable == false (O_APPEND) land at an offset decided at the call, so they
// are ordered against every write of their file (both ways). Reads are not ordered.
class WriteOrderGuard final : public Scheduler {
 public:
  explicit WriteOrderGuard(std::unique_ptr<Scheduler> inner) : inner_(std::move(inner)) {}
  const char* name() const override { return inner_->name(); }
  void Add(const Request& request) override;
  Decision Next(int64_t now_ns, Dispatch* out) override { return inner_->Next(now_ns, out); }
  void Release(uint64_t request_id, int result, int64_t duration_ns) override;
  size_t queued() const override { return inner_->queued() + held_.size(); }
  nlohmann::json EffectiveConfig() const override;
  void SetAppWeight(uint32_t app, uint32_t weight) override { inner_->SetAppWeight(app, weight); }
  Scheduler* inner() { return inner_.get(); }

 private:
  struct Pending {
    FileKey file;
    uint64_t offset = 0;
    uint64_t length = 0;
    uint32_t blockers = 0;  // earlier overlapping writes not yet released
    bool whole_file = false;
    std::vector<uint64_t> dependents;
  };
  struct FileWrites {
    std::multimap<uint64_t, uint64_t> by_offset;  // ranged writes: offset -> id
    std::vector<uint64_t> whole;                  // whole-file (append) writes
    uint64_t max_length = 0;                      // longest ranged write ever seen
  };
  using FileId = std::pair<uint64_t, uint64_t>;

  void Depend(uint64_t earlier, uint64_t later, Pending* p);

  std::unique_ptr<Scheduler> inner_;
  std::unordered_map<uint64_t, Pending> pending_;  // writes queued, held or in flight
  std::unordered_map<uint64_t, Request> held_;     // writes waiting for earlier ones
  std::map<FileId, FileWrites> files_;
};

}  // namespace iorelay::sched
