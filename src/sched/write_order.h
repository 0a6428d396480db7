// Keeps overlapping writes in arrival order around any algorithm: a write that overlaps an
// earlier write not yet released is held back until that one is released, so the later
// write wins, as on a local file system. The registry wraps every scheduler with it.
#pragma once

#include <absl/container/btree_map.h>
#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sched/scheduler.h"

namespace iorelay::sched {

// Writes with mergeable == false (O_APPEND) land at an offset decided at the call, so they
// are ordered against every write of their file (both ways). Reads are not ordered.
// Whole-file writes form a chain: each waits for the one before it and for the ranged writes
// that came since (which is, transitively, every earlier write), so a flood of appends costs
// one dependency each, not one per write queued before it.
// A tracked write is found by id only once it is dispatched: Next records the dispatched
// writes (from the dispatch's range, walking the file's index) in a table that holds just
// the writes in flight, so Add and a read's Release touch no table sized by the queue.
// Request ids must be unique among requests not yet released (the Scheduler contract).
class WriteOrderGuard final : public Scheduler {
 public:
  explicit WriteOrderGuard(std::unique_ptr<Scheduler> inner) : inner_(std::move(inner)) {}
  const char* name() const override { return inner_->name(); }
  void Add(const Request& request) override;
  Decision Next(int64_t now_ns, Dispatch* out) override;
  void Release(uint64_t request_id, int result, int64_t duration_ns) override;
  size_t queued() const override { return inner_->queued() + held_.size(); }
  nlohmann::json EffectiveConfig() const override;
  void SetAppWeight(uint32_t app, uint32_t weight) override { inner_->SetAppWeight(app, weight); }
  Scheduler* inner() { return inner_.get(); }
  // Writes tracked (queued, held or in flight) and files with such writes: both drop to 0
  // once every write was released.
  size_t tracked_writes() const { return tracked_writes_; }
  // Dependencies recorded and not yet resolved (a later write waiting for an earlier one).
  size_t dependencies() const { return dependencies_; }
  size_t tracked_files() const { return files_.size(); }

 private:
  using FileId = std::pair<uint64_t, uint64_t>;
  struct Range {
    uint64_t end = 0;
    uint64_t id = 0;
  };
  struct FileWrites {
    FileId id;
    // Ranged writes by offset; the key is a plain integer so that the B-tree searches its
    // nodes linearly. Equal offsets are rare: lookups pick their entry by id.
    absl::btree_multimap<uint64_t, Range> by_offset;
    absl::flat_hash_set<uint64_t> whole;  // whole-file (append) writes
    uint64_t last_whole = 0;              // the latest of them, while tracked (0: none)
    // Ranged writes added since the latest whole-file write (some maybe released since).
    std::vector<std::pair<uint64_t, uint64_t>> ranged_since_whole;  // (offset, id)
    uint64_t max_length = 0;  // longest ranged write ever seen
  };
  // A dispatched write: where its index entry is, for Release.
  struct InFlight {
    FileWrites* file = nullptr;  // stable: files_ holds them by pointer
    uint64_t offset = 0;
    bool whole_file = false;
  };
  struct Held {
    Request request;
    uint32_t blockers = 0;  // earlier overlapping writes not yet released
  };

  // Records the writes of a dispatch in in_flight_.
  void TrackDispatch(const Dispatch& d);
  bool Tracked(const FileWrites& f, uint64_t offset, uint64_t id) const;

  std::unique_ptr<Scheduler> inner_;
  absl::flat_hash_map<FileId, std::unique_ptr<FileWrites>> files_;
  absl::flat_hash_map<uint64_t, InFlight> in_flight_;  // dispatched writes not yet released
  absl::flat_hash_map<uint64_t, Held> held_;           // writes waiting for earlier ones
  // Later overlapping writes of a tracked write, in arrival order; only writes that have any.
  absl::flat_hash_map<uint64_t, std::vector<uint64_t>> dependents_;
  size_t tracked_writes_ = 0;
  size_t dependencies_ = 0;  // entries of dependents_
};

}  // namespace iorelay::sched
