// TO-agg: arrival order of virtual requests; a new request joins a queued virtual request
// of the same file/op/merge_class when contiguous (or, for reads with merge_overlap,
// overlapping), up to the caps. Hash index on (stream, end points): O(1) per Add.
#include <absl/container/btree_map.h>
#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>

#include <algorithm>
#include <deque>
#include <nlohmann/json.hpp>

#include "sched/algorithms.h"
#include "sched/run_queue.h"

namespace iorelay::sched {
namespace {

struct Group {
  QueueKey stream;  // file, op, class of the group (offset and seq zero)
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool open = true;  // others may join
  bool overlapping = false;
  // (offset, id), arrival order; most groups dispatch one or two requests: no heap block.
  absl::InlinedVector<std::pair<uint64_t, uint64_t>, 2> members;
};

struct KeyHash {
  size_t operator()(const QueueKey& k) const {
    uint64_t h = k.dev * 0x9E3779B97F4A7C15ull ^ k.ino;
    h = h * 0x9E3779B97F4A7C15ull ^ (uint64_t{k.merge_class} << 1 | static_cast<uint64_t>(k.op));
    h = h * 0x9E3779B97F4A7C15ull ^ k.offset;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

class ToAggScheduler final : public Scheduler {
 public:
  ToAggScheduler(DispatchLimits limits, bool merge_overlap, nlohmann::json config)
      : limits_(limits), merge_overlap_(merge_overlap), config_(std::move(config)) {}
  const char* name() const override { return "to-agg"; }
  void Add(const Request& r) override;
  Decision Next(int64_t now_ns, Dispatch* out) override;
  void Release(uint64_t, int, int64_t) override {}
  size_t queued() const override { return queued_; }
  nlohmann::json EffectiveConfig() const override { return config_; }

 private:
  using Index = absl::flat_hash_map<QueueKey, uint64_t, KeyHash>;  // (stream, offset) -> gseq
  Group& At(uint64_t gseq) { return timeline_[gseq - front_seq_]; }
  bool Fits(const Group& g, uint64_t lo, uint64_t hi) const {
    return g.open && g.members.size() < limits_.max_requests && hi - lo <= limits_.max_bytes;
  }
  static QueueKey Point(const QueueKey& stream, uint64_t offset, uint64_t seq = 0) {
    QueueKey k = stream;
    k.offset = offset;
    k.seq = seq;
    return k;
  }
  void Link(uint64_t gseq, const Group& g);
  void Unlink(uint64_t gseq, const Group& g);
  Group* Find(const Index& index, const QueueKey& point, uint64_t* gseq);
  bool TryJoin(const Request& r, const QueueKey& stream);
  void Join(uint64_t gseq, Group& g, const Request& r, bool overlap);
  void Relink(Index& index, uint64_t gseq, const QueueKey& stream, uint64_t from, uint64_t to);

  DispatchLimits limits_;
  bool merge_overlap_;
  nlohmann::json config_;
  std::deque<Group> timeline_;  // oldest first; groups leave only from the front
  uint64_t front_seq_ = 1;      // gseq of timeline_.front()
  Index by_lo_;
  Index by_hi_;
  absl::btree_map<QueueKey, uint64_t> ordered_lo_;  // only with merge_overlap: (stream, lo, gseq)
  size_t queued_ = 0;
};

void ToAggScheduler::Link(uint64_t gseq, const Group& g) {
  if (!g.open) return;
  by_lo_[Point(g.stream, g.lo)] = gseq;
  by_hi_[Point(g.stream, g.hi)] = gseq;
  if (merge_overlap_) ordered_lo_.emplace(Point(g.stream, g.lo, gseq), gseq);
}

void ToAggScheduler::Unlink(uint64_t gseq, const Group& g) {
  if (!g.open) return;
  const QueueKey& stream = g.stream;
  auto lo = by_lo_.find(Point(stream, g.lo));
  if (lo != by_lo_.end() && lo->second == gseq) by_lo_.erase(lo);
  auto hi = by_hi_.find(Point(stream, g.hi));
  if (hi != by_hi_.end() && hi->second == gseq) by_hi_.erase(hi);
  if (merge_overlap_) ordered_lo_.erase(Point(stream, g.lo, gseq));
}

Group* ToAggScheduler::Find(const Index& index, const QueueKey& point, uint64_t* gseq) {
  auto it = index.find(point);
  if (it == index.end()) return nullptr;
  *gseq = it->second;
  return &At(it->second);
}

// Moves the group's entry in one end-point index from `from` to `to`.
void ToAggScheduler::Relink(Index& index, uint64_t gseq, const QueueKey& stream, uint64_t from,
                            uint64_t to) {
  auto it = index.find(Point(stream, from));
  if (it != index.end() && it->second == gseq) index.erase(it);
  index[Point(stream, to)] = gseq;
}

void ToAggScheduler::Join(uint64_t gseq, Group& g, const Request& r, bool overlap) {
  // Only the end points that move are re-indexed (a join at one end leaves the other).
  const uint64_t lo = std::min(g.lo, r.offset);
  const uint64_t hi = std::max(g.hi, r.offset + r.length);
  if (lo != g.lo) {
    Relink(by_lo_, gseq, g.stream, g.lo, lo);
    if (merge_overlap_) {
      ordered_lo_.erase(Point(g.stream, g.lo, gseq));
      ordered_lo_.emplace(Point(g.stream, lo, gseq), gseq);
    }
  }
  if (hi != g.hi) Relink(by_hi_, gseq, g.stream, g.hi, hi);
  g.members.emplace_back(r.offset, r.id);
  g.lo = lo;
  g.hi = hi;
  g.overlapping = g.overlapping || overlap;
}

bool ToAggScheduler::TryJoin(const Request& r, const QueueKey& stream) {
  const uint64_t end = r.offset + r.length;
  uint64_t gseq = 0;
  if (Group* g = Find(by_hi_, Point(stream, r.offset), &gseq); g && Fits(*g, g->lo, end)) {
    Join(gseq, *g, r, false);  // r continues a group
    return true;
  }
  if (Group* g = Find(by_lo_, Point(stream, end), &gseq); g && Fits(*g, r.offset, g->hi)) {
    Join(gseq, *g, r, false);  // r precedes a group
    return true;
  }
  if (!merge_overlap_ || r.op != IoOp::kRead) return false;
  // The group starting closest at or before r's end; joins if it overlaps r.
  auto it = ordered_lo_.upper_bound(Point(stream, end, UINT64_MAX));
  if (it == ordered_lo_.begin()) return false;
  --it;
  if (!it->first.SameStream(stream)) return false;
  gseq = it->second;
  Group& g = At(gseq);
  if (g.hi <= r.offset) return false;  // disjoint (touching was handled above)
  if (!Fits(g, std::min(g.lo, r.offset), std::max(g.hi, end))) return false;
  Join(gseq, g, r, true);
  return true;
}

void ToAggScheduler::Add(const Request& r) {
  ++queued_;
  const QueueKey stream = StreamOf(KeyOf(r, 0));
  if (r.mergeable && r.length > 0 && TryJoin(r, stream)) return;
  Group g;
  g.stream = stream;
  g.open = r.mergeable && r.length > 0;
  g.members.emplace_back(r.offset, r.id);
  g.lo = r.offset;
  g.hi = r.offset + r.length;
  timeline_.push_back(std::move(g));
  const uint64_t gseq = front_seq_ + timeline_.size() - 1;
  Link(gseq, timeline_.back());
}

Decision ToAggScheduler::Next(int64_t, Dispatch* out) {
  if (timeline_.empty()) return Decision{Decision::Kind::kIdle, 0};
  Group& g = timeline_.front();
  Unlink(front_seq_, g);
  if (!g.overlapping) std::sort(g.members.begin(), g.members.end());
  out->file = FileKey{g.stream.dev, g.stream.ino};
  out->op = g.stream.op;
  out->offset = g.lo;
  out->length = g.hi - g.lo;
  out->overlapping = g.overlapping;
  out->request_ids.clear();
  for (const auto& m : g.members) out->request_ids.push_back(m.second);
  queued_ -= g.members.size();
  timeline_.pop_front();
  ++front_seq_;
  return Decision{Decision::Kind::kDispatch, 0};
}

}  // namespace

SchedulerResult MakeToAgg(const SchedulerParams& params) {
  ParamReader reader("to-agg", params);
  DispatchLimits limits = ReadLimits(&reader);
  bool merge_overlap = reader.Flag("merge_overlap", false);
  IORELAY_RETURN_IF_ERROR(reader.Finish());
  return std::unique_ptr<Scheduler>(
      std::make_unique<ToAggScheduler>(limits, merge_overlap, reader.effective()));
}

}  // namespace iorelay::sched
