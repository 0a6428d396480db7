// Keeps overlapping writes in arrival order around any algorithm: a write that overlaps an
// earlier write not yet released is held back until that one is released, so the later
// write wins, as on a local file system. The registry wraps every scheduler with it.
#pragma once

#include <absl/container/btree_map.h>
#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/container/inlined_vector.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sched/scheduler.h"

namespace iorelay::sched {

// Writes with mergeable == false (O_APPEND) land at an offset decided at the call, so they
// are ordered against every write of their file (both ways). Reads are not ordered.
// A write needs to wait only for enough earlier writes that, transitively, every earlier
// overlapping one is before it, so the guard keeps its dependencies few:
// - Barriers: an append, or a ranged write whose overlap search would visit more than
//   kMaxOverlapScan index entries, waits for the barrier before it and for the ranged writes
//   that came since; every later write waits for it. Each write is thus one step of a chain
//   for the next barrier, so a flood of appends, or of writes over one region, costs a few
//   dependencies each, not one per write queued before it.
// - Covered writes: a ranged write that a later one contains leaves the offset index (a write
//   overlapping it overlaps the later one, which waits for it); it stays findable by id.
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
  void RemoveApp(uint32_t app) override { inner_->RemoveApp(app); }
  std::vector<uint32_t> AppsHeld() const override { return inner_->AppsHeld(); }
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
  struct Extent {
    uint64_t offset = 0;
    uint64_t end = 0;
  };
  using Index = absl::btree_multimap<uint64_t, Range>;
  struct FileWrites {
    FileId id;
    // Ranged writes since the latest barrier that no later write covers, by offset; the key
    // is a plain integer so that the B-tree searches its nodes linearly. Equal offsets are
    // rare: lookups pick their entry by id.
    Index by_offset;
    absl::flat_hash_map<uint64_t, Extent> covered;  // the other tracked ranged writes, by id
    absl::flat_hash_set<uint64_t> whole;            // whole-file (append) writes
    uint64_t last_barrier = 0;                      // the latest barrier, while tracked (0: none)
    // Ranged writes added since the latest barrier (some maybe released since).
    std::vector<std::pair<uint64_t, uint64_t>> ranged_since_barrier;  // (offset, id)
    uint64_t max_length = 0;  // longest write in by_offset since the latest barrier (or more)
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

  // More index entries than this in one write's overlap search make the write a barrier.
  static constexpr int kMaxOverlapScan = 128;

  using Earlier = absl::InlinedVector<uint64_t, 8>;  // the writes a write waits for

  // Adds the indexed writes overlapping [begin, end) to *earlier, moves those it contains out
  // of the index, and sets *hint to where the scan stopped. False (nothing changed): the
  // search visits more than kMaxOverlapScan entries.
  bool FindOverlaps(FileWrites& f, uint64_t begin, uint64_t end, Earlier* earlier,
                    Index::iterator* hint);
  // Makes the request f's barrier: it waits for the ranged writes since the last one, which
  // leave the index.
  void BecomeBarrier(FileWrites& f, const Request& request, Earlier* earlier);
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
