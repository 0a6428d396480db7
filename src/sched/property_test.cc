// Property tests over seeded random workloads, for every algorithm: each request is
// dispatched exactly once; merged dispatches are contiguous, of one file/op/merge_class and
// within the caps; overlapping writes run in arrival order; no request waits past a bound.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "sched/registry.h"
#include "testutil/sched_driver_testutil.h"

namespace iorelay::sched {
namespace {

using testing::Drive;
using testing::Trace;

constexpr uint64_t kCapBytes = 256 << 10;
constexpr uint32_t kCapRequests = 16;

// 3 applications x 4 files: sequential streams, random offsets, overlapping writes,
// appends (not mergeable), two merge classes; load about 40% of 2 workers.
std::vector<Request> Workload(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<Request> out;
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> cursor;
  int64_t t = 0;
  std::exponential_distribution<double> gap(1.0 / 75'000);
  for (uint64_t id = 1; id <= n; ++id) {
    t += static_cast<int64_t>(gap(rng));
    Request r;
    r.id = id;
    r.app = static_cast<uint32_t>(rng() % 3);
    r.file = FileKey{7, 1 + rng() % 4};
    r.op = rng() % 3 == 0 ? IoOp::kRead : IoOp::kWrite;
    r.length = (1 + rng() % 8) * 8192;
    uint64_t& c = cursor[{r.app, r.file.ino}];
    switch (rng() % 10) {
      case 0:
        r.offset = (rng() % 512) * 4096;
        break;  // random, may overlap
      case 1:
        r.mergeable = false;
        r.offset = c;
        break;
      default:
        r.offset = c + (r.app + 1) * (64ull << 20);
    }
    c += r.length;
    r.merge_class = rng() % 10 == 0 ? 1 : 0;
    r.client = r.app + 1;  // what gather waits for
    r.arrival_ns = t;
    out.push_back(r);
  }
  return out;
}

int64_t Service(const Dispatch& d) { return 20'000 + static_cast<int64_t>(d.length); }  // 1 GB/s

struct Case {
  const char* spec;
  // The stated bound for this workload (see docs/schedulers.md). twins:by=app is looser:
  // appends order every write of their file, so a write may wait for writes of other
  // applications, each served only in its own application's window.
  int64_t max_wait_ns;
};

class Property : public ::testing::TestWithParam<Case> {};

TEST_P(Property, ExactlyOnceContiguousOrderedBounded) {
  SchedulerRegistry reg;
  RegisterBuiltinSchedulers(&reg);
  const std::string caps = "max_dispatch_bytes=256KiB,max_dispatch_requests=16";
  std::string spec = GetParam().spec;
  spec += (spec.find(':') == std::string::npos ? ":" : ",") + caps;
  if (spec.starts_with("fifo")) spec = "fifo";
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    auto created = reg.CreateFromSpec(spec);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    Scheduler& s = **created;
    std::vector<Request> work = Workload(seed, 2000);
    Trace t = Drive(s, work, 2, Service);
    ASSERT_FALSE(t.stuck) << spec << ": asked to sleep until now or earlier";
    EXPECT_EQ(s.queued(), 0u);
    std::map<uint64_t, const Request*> by_id;
    for (const Request& r : work) by_id[r.id] = &r;
    for (const Request& r : work) ASSERT_EQ(t.times_dispatched[r.id], 1) << spec << " id " << r.id;
    ASSERT_EQ(t.times_dispatched.size(), work.size());
    for (const auto& run : t.runs) {
      const Dispatch& d = run.d;
      ASSERT_FALSE(d.request_ids.empty());
      uint64_t at = d.offset;
      const Request& first = *by_id.at(d.request_ids.front());
      for (uint64_t id : d.request_ids) {
        const Request& r = *by_id.at(id);
        EXPECT_EQ(r.file, d.file);
        EXPECT_EQ(r.op, d.op);
        EXPECT_EQ(r.merge_class, first.merge_class);
        EXPECT_EQ(r.offset, at) << spec << ": not contiguous";
        at += r.length;
        if (d.request_ids.size() > 1) {
          EXPECT_TRUE(r.mergeable) << spec;
        }
      }
      EXPECT_EQ(at, d.offset + d.length);
      if (d.request_ids.size() > 1) {
        EXPECT_LE(d.length, kCapBytes) << spec;
        EXPECT_LE(d.request_ids.size(), kCapRequests) << spec;
      }
    }
    // Overlapping writes: the later one starts only after the earlier one finished.
    for (size_t i = 0; i < work.size(); ++i) {
      const Request& a = work[i];
      if (a.op != IoOp::kWrite) continue;
      for (size_t j = i + 1; j < work.size(); ++j) {
        const Request& b = work[j];
        if (b.op != IoOp::kWrite || !(b.file == a.file)) continue;
        bool overlap = !a.mergeable || !b.mergeable ||
                       (a.offset < b.offset + b.length && b.offset < a.offset + a.length);
        if (!overlap) continue;
        EXPECT_GE(t.runs[t.run_of[b.id]].start_ns, t.runs[t.run_of[a.id]].done_ns)
            << spec << ": write " << b.id << " overtook " << a.id;
      }
    }
    int64_t worst = 0;
    for (const Request& r : work) {
      worst = std::max(worst, t.runs[t.run_of[r.id]].start_ns - r.arrival_ns);
    }
    EXPECT_LE(worst, GetParam().max_wait_ns) << spec << " seed " << seed;
    std::printf("[ worst wait ] %-24s seed %lu: %.1f ms\n", GetParam().spec,
                static_cast<unsigned long>(seed), static_cast<double>(worst) / 1e6);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllAlgorithms, Property,
    ::testing::Values(Case{"fifo", 50'000'000}, Case{"to-agg", 50'000'000},
                      Case{"sjf:max_wait=20ms", 50'000'000}, Case{"aioli", 50'000'000},
                      Case{"aioli:sync=false", 50'000'000}, Case{"mlf", 50'000'000},
                      Case{"sw:window=10ms", 50'000'000}, Case{"twins", 50'000'000},
                      Case{"twins:by=app", 150'000'000}, Case{"wfq:weight.1=3", 50'000'000},
                      Case{"hbrr", 50'000'000}, Case{"dynamic:period=5ms", 50'000'000},
                      Case{"sjf:max_wait=20ms,gather=500us", 50'000'000},
                      Case{"mlf:gather=2ms", 50'000'000}),
    [](const auto& info) {
      std::string n = info.param.spec;
      for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return n;
    });

}  // namespace
}  // namespace iorelay::sched
