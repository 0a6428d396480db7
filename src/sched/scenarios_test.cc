// Scenarios in virtual time that pin down each algorithm's order and merging.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sched/quantum.h"
#include "sched/registry.h"
#include "sched/write_order.h"
#include "testutil/sched_driver_testutil.h"

namespace iorelay::sched {
namespace {

using testing::DrainOrder;
using testing::MakeRequest;
using testing::New;
constexpr uint64_t K = 1024;

TEST(ToAgg, MergesContiguousUpToCapInArrivalOrder) {
  auto s = New("to-agg:max_dispatch_bytes=16KiB");
  s->Add(MakeRequest(1, 1, 4 * K, 4 * K));
  s->Add(MakeRequest(2, 2, 0, 4 * K));  // another file
  s->Add(MakeRequest(3, 1, 0, 4 * K));  // precedes 1
  s->Add(MakeRequest(4, 1, 8 * K, 4 * K));
  s->Add(MakeRequest(5, 1, 12 * K, 4 * K));
  s->Add(MakeRequest(6, 1, 16 * K, 4 * K));  // would exceed the 16 KiB cap
  Dispatch d;
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.offset, 0u);
  EXPECT_EQ(d.length, 16 * K);
  EXPECT_EQ(d.request_ids, (std::vector<uint64_t>{3, 1, 4, 5}));
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids, (std::vector<uint64_t>{2}));
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids, (std::vector<uint64_t>{6}));
  EXPECT_EQ(s->Next(0, &d).kind, Decision::Kind::kIdle);
}

TEST(ToAgg, OverlappingReadsJoinWhenEnabledNeverAcrossClassOrAppend) {
  auto s = New("to-agg:merge_overlap=true");
  s->Add(MakeRequest(1, 1, 0, 8 * K, IoOp::kRead));
  s->Add(MakeRequest(2, 1, 4 * K, 8 * K, IoOp::kRead));
  Request other_class = MakeRequest(3, 1, 12 * K, 4 * K, IoOp::kRead);
  other_class.merge_class = 0x4000;  // e.g. O_DIRECT
  s->Add(other_class);
  Request append = MakeRequest(4, 1, 12 * K, 4 * K, IoOp::kRead);
  append.mergeable = false;
  s->Add(append);
  Dispatch d;
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_TRUE(d.overlapping);
  EXPECT_EQ(d.offset, 0u);
  EXPECT_EQ(d.length, 12 * K);
  EXPECT_EQ(d.request_ids, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(DrainOrder(*s), (std::vector<uint64_t>{3, 4}));
}

TEST(Sjf, FewestQueuedBytesFirstAndAgingBoundsTheWait) {
  auto s = New("sjf:max_wait=10ms");
  s->Add(MakeRequest(1, 1, 0, 64 * K, IoOp::kWrite, 0));
  s->Add(MakeRequest(2, 1, 1 << 20, 64 * K, IoOp::kWrite, 0));
  s->Add(MakeRequest(3, 2, 0, 16 * K, IoOp::kWrite, 0));
  s->Add(MakeRequest(4, 3, 0, 32 * K, IoOp::kWrite, 0));
  EXPECT_EQ(DrainOrder(*s, 1'000'000), (std::vector<uint64_t>{3, 4, 1, 2}));
  // A big queue waits, small queues keep coming; aging serves it once its oldest waited.
  s->Add(MakeRequest(10, 1, 0, 1 << 20, IoOp::kWrite, 0));
  Dispatch d;
  for (int i = 0; i < 12; ++i) {
    const int64_t now = i * 1'000'000;
    s->Add(MakeRequest(100 + i, 5 + i, 0, 4 * K, IoOp::kWrite, now));
    ASSERT_EQ(s->Next(now, &d).kind, Decision::Kind::kDispatch);
    if (now < 10'000'000) {
      EXPECT_EQ(d.request_ids[0], 100u + i) << "t=" << now;
    } else {
      EXPECT_EQ(d.request_ids[0], 10u) << "aged request not served at t=" << now;
      break;
    }
  }
}

TEST(Aioli, QuantumRule) {
  EXPECT_EQ(AdaptQuantum(64 * K, 112 * K, 4 * K, 4 << 20), 128 * K);     // 175% -> x2
  EXPECT_EQ(AdaptQuantum(64 * K, 80 * K, 4 * K, 4 << 20), 96 * K);       // 125% -> x1.5
  EXPECT_EQ(AdaptQuantum(64 * K, 48 * K, 4 * K, 4 << 20), 64 * K);       // 75% -> same
  EXPECT_EQ(AdaptQuantum(64 * K, 47 * K, 4 * K, 4 << 20), 32 * K);       // else /2
  EXPECT_EQ(AdaptQuantum(4 << 20, 64 << 20, 4 * K, 4 << 20), 4u << 20);  // bounded in bytes
}

TEST(Aioli, ServesAQueueInOffsetOrder) {
  auto s = New("aioli:wait=0,sync=false");
  for (uint64_t id : {3, 1, 4, 2}) s->Add(MakeRequest(id, 1, id * 128 * K, 64 * K));
  EXPECT_EQ(DrainOrder(*s), (std::vector<uint64_t>{1, 2, 3, 4}));
}

TEST(Aioli, QuantaGrowThenShrink) {
  auto s = New("aioli:wait=0,sync=false,quantum=64KiB,max_quantum=1MiB");
  // 2 MiB + 960 KiB contiguous, in 16 KiB requests.
  uint64_t id = 1;
  for (uint64_t off = 0; off < (2048 + 960) * K; off += 16 * K) {
    s->Add(MakeRequest(id++, 1, off, 16 * K));
  }
  std::vector<uint64_t> sizes;
  Dispatch d;
  while (s->Next(0, &d).kind == Decision::Kind::kDispatch) sizes.push_back(d.length / K);
  // x2 per visit while the queue offers >= 175%, capped at max_quantum (bytes).
  EXPECT_EQ(sizes, (std::vector<uint64_t>{64, 128, 256, 512, 1024, 1024}));
  // The last visit used 1024 of 1024 (same); one small visit -> /2.
  s->Add(MakeRequest(id++, 1, 8 << 20, 16 * K));
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  for (uint64_t off = 16 << 20; off < (18 << 20); off += 16 * K) {
    s->Add(MakeRequest(id++, 1, off, 16 * K));
  }
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.length, 512 * K);
}

TEST(Aioli, FactorsLetSmallHeadsPassABigOldOne) {
  auto s = New("aioli:wait=0,sync=false,quantum=64KiB");
  s->Add(MakeRequest(1, 1, 0, 1 << 20, IoOp::kWrite, 0));  // needs factor 16: 4 passes
  for (uint64_t i = 0; i < 6; ++i) s->Add(MakeRequest(10 + i, 2 + i, 0, 64 * K, IoOp::kWrite, 1));
  EXPECT_EQ(DrainOrder(*s), (std::vector<uint64_t>{10, 11, 12, 13, 1, 14, 15}));
}

TEST(Aioli, ReadsBeforeWritesThenOldestHead) {
  auto s = New("aioli:wait=0,sync=false");
  s->Add(MakeRequest(1, 1, 0, 4 * K, IoOp::kWrite, 0));
  s->Add(MakeRequest(2, 2, 0, 4 * K, IoOp::kWrite, 5));
  s->Add(MakeRequest(3, 3, 0, 4 * K, IoOp::kRead, 9));
  EXPECT_EQ(DrainOrder(*s), (std::vector<uint64_t>{3, 1, 2}));
}

// After a dispatch ending at 128K, requests at 192K (id 2) and 0 (id 3) are queued. The
// default order takes the lowest queued offset first (a process that fell behind is served
// first); order=elevator continues from where the last dispatch ended.
TEST(AioliAndMlf, HeadOrderOffsetOrElevator) {
  for (const auto& [spec, want] :
       {std::pair{"aioli:wait=0,sync=false", std::vector<uint64_t>{3, 2}},
        std::pair{"aioli:wait=0,sync=false,order=elevator", std::vector<uint64_t>{2, 3}},
        std::pair{"mlf", std::vector<uint64_t>{3, 2}},
        std::pair{"mlf:order=elevator", std::vector<uint64_t>{2, 3}}}) {
    auto s = New(spec);
    Dispatch d;
    s->Add(MakeRequest(1, 1, 64 * K, 64 * K));
    ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
    s->Add(MakeRequest(2, 1, 192 * K, 64 * K));
    s->Add(MakeRequest(3, 1, 0, 64 * K));
    EXPECT_EQ(DrainOrder(*s), want) << spec;
  }
}

// A shift (a request behind where the last dispatch ended) with the head beyond it only
// happens in elevator order; there the queue is held once for the short wait.
TEST(Aioli, ShortWaitOnAShiftIsASleepNotASpin) {
  auto s = New("aioli:wait=900us,sync=false,order=elevator");
  Dispatch d;
  s->Add(MakeRequest(1, 1, 64 * K, 64 * K));
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);  // cursor at 128K
  s->Add(MakeRequest(2, 1, 0, 64 * K));                       // a slower process: a shift
  s->Add(MakeRequest(3, 1, 192 * K, 64 * K));                 // head beyond the cursor
  Decision dec = s->Next(1000, &d);
  ASSERT_EQ(dec.kind, Decision::Kind::kSleepUntil);
  EXPECT_EQ(dec.wake_ns, 1000 + 900'000);
  ASSERT_EQ(s->Next(dec.wake_ns, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids, (std::vector<uint64_t>{3}));
}

TEST(Aioli, SynchronousQueueWaitsForRelease) {
  auto s = New("aioli:wait=0");
  s->Add(MakeRequest(1, 1, 0, 4 * K));
  s->Add(MakeRequest(2, 1, 1 << 20, 4 * K));
  s->Add(MakeRequest(3, 2, 0, 4 * K));
  Dispatch d;
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids[0], 1u);
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);  // the other file may go
  EXPECT_EQ(d.request_ids[0], 3u);
  EXPECT_EQ(s->Next(0, &d).kind, Decision::Kind::kIdle);  // file 1 waits for request 1
  s->Release(1, 0, 100);
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids[0], 2u);
}

TEST(Mlf, RoundRobinAcrossFilesAndNotOnlyTheHead) {
  auto s = New("mlf");
  for (uint64_t i = 0; i < 3; ++i) {
    s->Add(MakeRequest(10 + i, 1, i * 128 * K, 64 * K));
    s->Add(MakeRequest(20 + i, 2, i * 128 * K, 64 * K));
  }
  EXPECT_EQ(DrainOrder(*s), (std::vector<uint64_t>{10, 20, 11, 21, 12, 22}));
  s->Add(MakeRequest(1, 1, 0, 1 << 20));       // head, not covered yet
  s->Add(MakeRequest(2, 1, 4 << 20, 64 * K));  // covered: goes first
  EXPECT_EQ(DrainOrder(*s), (std::vector<uint64_t>{2, 1}));
}

TEST(Sw, WindowThenApplication) {
  auto s = New("sw:window=10ms");
  s->Add(MakeRequest(1, 1, 0, 4 * K, IoOp::kWrite, 1'000'000, /*app=*/2));
  s->Add(MakeRequest(2, 2, 0, 4 * K, IoOp::kWrite, 2'000'000, 1));
  s->Add(MakeRequest(3, 3, 0, 4 * K, IoOp::kWrite, 11'000'000, 1));
  s->Add(MakeRequest(4, 1, 4 * K, 4 * K, IoOp::kWrite, 3'000'000, 2));
  Dispatch d;
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids, (std::vector<uint64_t>{2}));
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids, (std::vector<uint64_t>{1, 4}));  // same app, window: merged
  EXPECT_EQ(DrainOrder(*s), (std::vector<uint64_t>{3}));
}

TEST(Twins, ServesOnlyTheCurrentWindowsQueue) {
  auto s = New("twins:window=2ms");
  s->Add(MakeRequest(1, 1, 0, 4 * K));
  s->Add(MakeRequest(2, 2, 0, 4 * K));
  s->Add(MakeRequest(3, 2, 64 * K, 4 * K));
  Dispatch d;
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids[0], 1u);
  Decision dec = s->Next(500'000, &d);  // file 1 is empty: the rest of its window
  ASSERT_EQ(dec.kind, Decision::Kind::kSleepUntil);
  EXPECT_EQ(dec.wake_ns, 2'000'000);
  ASSERT_EQ(s->Next(2'000'000, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids[0], 2u);
  s->Add(MakeRequest(4, 1, 4 * K, 4 * K));  // file 1 again, but file 2's window
  ASSERT_EQ(s->Next(2'100'000, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids[0], 3u);
  ASSERT_EQ(s->Next(4'000'000, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids[0], 4u);
}

TEST(Wfq, SharesBytesInTheWeightRatio) {
  auto s = New("wfq:quantum=64KiB,weight.1=3,weight.2=1");
  uint64_t id = 1;
  for (uint64_t i = 0; i < 2000; ++i) {
    s->Add(MakeRequest(id++, 1, i * 1024 * K, (16 + i % 48) * K, IoOp::kWrite, 0, 1));
    s->Add(MakeRequest(id++, 2, i * 1024 * K, (16 + i % 48) * K, IoOp::kWrite, 0, 2));
  }
  std::map<uint64_t, uint64_t> bytes;  // by file == by app here
  Dispatch d;
  for (int i = 0; i < 1500; ++i) {
    ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
    bytes[d.file.ino] += d.length;
  }
  const double ratio = static_cast<double>(bytes[1]) / static_cast<double>(bytes[2]);
  EXPECT_NEAR(ratio, 3.0, 0.15);
}

TEST(Wfq, RuntimeWeightsApply) {
  auto s = New("wfq:quantum=64KiB");
  s->SetAppWeight(2, 2);
  for (uint64_t i = 0; i < 200; ++i) {
    s->Add(MakeRequest(1000 + i, 1, i * 1024 * K, 64 * K, IoOp::kWrite, 0, 1));
    s->Add(MakeRequest(2000 + i, 2, i * 1024 * K, 64 * K, IoOp::kWrite, 0, 2));
  }
  std::map<uint64_t, int> n;
  Dispatch d;
  for (int i = 0; i < 90; ++i) {
    ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
    ++n[d.file.ino];
  }
  EXPECT_EQ(n[1], 30);
  EXPECT_EQ(n[2], 60);
}

TEST(Hbrr, QuantumOfDequeuesBatchesOfContiguousRanges) {
  auto s = New("hbrr:quantum=2,batch=2");
  for (uint64_t i = 0; i < 6; ++i) s->Add(MakeRequest(10 + i, 1, i * 4 * K, 4 * K));
  s->Add(MakeRequest(20, 2, 0, 4 * K));
  s->Add(MakeRequest(21, 2, 100 * K, 4 * K));
  std::vector<std::vector<uint64_t>> got;
  Dispatch d;
  while (s->Next(0, &d).kind == Decision::Kind::kDispatch) got.push_back(d.request_ids);
  EXPECT_EQ(got, (std::vector<std::vector<uint64_t>>{{10, 11}, {12, 13}, {20}, {21}, {14, 15}}));
}

TEST(Dynamic, TriesEachCandidateThenSticksToMeasurementsDeterministically) {
  auto run = [](uint64_t seed) {
    auto s = New("dynamic:candidates=fifo+to-agg,period=1ms,seed=" + std::to_string(seed));
    std::vector<Request> work;
    for (uint64_t i = 0; i < 4000; ++i) {
      work.push_back(MakeRequest(i + 1, 1, i * 4 * K, 4 * K, IoOp::kWrite, i * 5'000));
    }
    // Merged dispatches are cheaper per byte: to-agg should be measured faster.
    auto t = testing::Drive(
        *s, work, 1, [](const Dispatch& d) { return 50'000 + static_cast<int64_t>(d.length); });
    return std::make_pair(s->EffectiveConfig(), t.runs.size());
  };
  auto [config, runs] = run(7);
  const auto& bw = config["state"]["bytes_per_s"];
  ASSERT_TRUE(bw.contains("fifo"));
  ASSERT_TRUE(bw.contains("to-agg"));
  EXPECT_GT(bw["to-agg"].get<double>(), bw["fifo"].get<double>());
  EXPECT_EQ(run(7).second, runs);  // seeded: the same choices
}

TEST(WriteOrder, LaterOverlappingWriteWaitsForTheEarlierRelease) {
  auto s = New("fifo");
  s->Add(MakeRequest(1, 1, 0, 8 * K));
  s->Add(MakeRequest(2, 1, 4 * K, 8 * K));   // overlaps 1
  s->Add(MakeRequest(3, 1, 64 * K, 8 * K));  // disjoint
  Dispatch d;
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids[0], 1u);
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids[0], 3u);
  EXPECT_EQ(s->Next(0, &d).kind, Decision::Kind::kIdle);
  EXPECT_EQ(s->queued(), 1u);
  s->Release(2, 0, 1);  // not dispatched yet: ignored
  s->Release(1, 0, 1);
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids[0], 2u);
}

// A merged dispatch of writes, one of which shares its offset with a held later write: each
// dispatched write is released on its own, and only the release of the one it overlaps
// lets the held write go.
TEST(WriteOrder, MergedWritesAreReleasedOneByOne) {
  auto s = New("to-agg");
  s->Add(MakeRequest(1, 1, 0, 8 * K));
  s->Add(MakeRequest(2, 1, 8 * K, 8 * K));
  s->Add(MakeRequest(3, 1, 0, 4 * K));  // overlaps 1 only
  Dispatch d;
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids, (std::vector<uint64_t>{1, 2}));
  s->Release(2, 0, 1);
  EXPECT_EQ(s->Next(0, &d).kind, Decision::Kind::kIdle);  // 3 still waits for 1
  s->Release(1, 0, 1);
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.request_ids, (std::vector<uint64_t>{3}));
  s->Release(3, 0, 1);
  EXPECT_EQ(dynamic_cast<WriteOrderGuard*>(s.get())->tracked_writes(), 0u);
}

}  // namespace
}  // namespace iorelay::sched
