// Scheduler state stays bounded, and what EffectiveConfig() prints reads back as the same
// scheduler (run-time weights included).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <vector>

#include "sched/registry.h"
#include "sched/write_order.h"
#include "testutil/sched_driver_testutil.h"

namespace iorelay::sched {
namespace {

using testing::DrainAll;
using testing::DrainOrder;
using testing::MakeRequest;
using testing::New;
constexpr uint64_t K = 1024;

nlohmann::json WithoutState(nlohmann::json j) {
  j.erase("state");
  return j;
}

// Many one-shot streams (a file each, written once): per-stream state must not pile up.
class IdleStreams : public ::testing::TestWithParam<const char*> {};

TEST_P(IdleStreams, StateOfOneShotStreamsIsBounded) {
  const std::string base = GetParam();
  const std::string sep = base.find(':') == std::string::npos ? ":" : ",";
  const std::string spec = base + sep + "idle_streams=8";
  auto s = New(spec);
  ASSERT_NE(s, nullptr);
  for (uint64_t i = 1; i <= 1000; ++i) {
    s->Add(MakeRequest(i, /*ino=*/i, 0, 64 * K));
    if (i % 10 == 0) DrainOrder(*s, static_cast<int64_t>(i) * 1'000'000);
  }
  DrainOrder(*s, 2'000'000'000);
  nlohmann::json state = s->EffectiveConfig()["state"];
  EXPECT_EQ(state["idle_streams"], 8) << spec;
  EXPECT_EQ(state["streams"], 8) << spec;
  EXPECT_EQ(s->EffectiveConfig()["idle_streams"], 8);
  // 0: a stream's state goes as soon as it has nothing queued or in flight.
  auto none = New(base + sep + "idle_streams=0");
  for (uint64_t i = 1; i <= 100; ++i) none->Add(MakeRequest(i, i, 0, 64 * K));
  EXPECT_EQ(DrainOrder(*none, 1'000'000'000).size(), 100u);
  EXPECT_EQ(none->EffectiveConfig()["state"]["streams"], 0);
  // The default keeps the recent ones.
  EXPECT_EQ(New(GetParam())->EffectiveConfig()["idle_streams"], 4096);
}

INSTANTIATE_TEST_SUITE_P(AioliAndMlf, IdleStreams,
                         ::testing::Values("aioli", "aioli:sync=false", "mlf"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

TEST(AioliIdleStream, ComesBackWithItsQuantum) {
  // 1 MiB contiguous per round: each visit finds more than its quantum, which grows.
  auto s = New("aioli:wait=0,sync=false");
  uint64_t id = 0;
  auto add = [&] {
    ++id;
    s->Add(MakeRequest(id, 1, (id - 1) * 16 * K, 16 * K));
  };
  for (int round = 0; round < 3; ++round) {
    for (uint64_t k = 0; k < 64; ++k) add();
    DrainOrder(*s);
  }
  // The stream idled between rounds: had its state been dropped, the first dispatch of a
  // round would be one 64 KiB quantum again.
  for (uint64_t k = 0; k < 64; ++k) add();
  Dispatch d;
  ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_GT(d.length, 64 * K);
}

TEST(EffectiveConfig, RuntimeWeightsShowAndReadBack) {
  for (const char* spec : {"wfq:weight.1=3", "aioli:weight.1=3"}) {
    auto s = New(spec);
    ASSERT_NE(s, nullptr);
    s->SetAppWeight(2, 5);
    s->SetAppWeight(1, 4);
    nlohmann::json c = s->EffectiveConfig();
    EXPECT_EQ(c["weights"], nlohmann::json({{"1", 4}, {"2", 5}})) << spec << ": " << c.dump();
    auto again = New(c.dump());
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(WithoutState(again->EffectiveConfig()), WithoutState(c)) << spec;
  }
}

// A departed application (a daemon's job released or revoked) leaves nothing behind in any
// scheduler once its requests are served: no weight, no queue.
TEST(RemoveApp, NothingOfTheAppStaysOnceItsRequestsAreServed) {
  SchedulerRegistry reg;
  RegisterBuiltinSchedulers(&reg);
  std::vector<std::string> specs = reg.Names();
  specs.push_back("twins:by=app");
  for (const std::string& spec : specs) {
    auto s = New(spec);
    ASSERT_NE(s, nullptr) << spec;
    s->SetAppWeight(7, 3);
    s->SetAppWeight(8, 2);
    uint64_t id = 0;
    for (uint64_t k = 0; k < 8; ++k) {
      s->Add(MakeRequest(++id, 1, k * 64 * K, 64 * K, IoOp::kWrite, 0, /*app=*/7));
      s->Add(MakeRequest(++id, 2, k * 64 * K, 64 * K, IoOp::kWrite, 0, /*app=*/8));
    }
    s->RemoveApp(7);  // its requests still queued are served
    int64_t now = 0;
    size_t served = 0;
    for (int step = 0; step < 10'000 && s->queued() > 0; ++step) {
      Dispatch d;
      const Decision decision = s->Next(now, &d);
      if (decision.kind == Decision::Kind::kDispatch) {
        served += d.request_ids.size();
        for (uint64_t r : d.request_ids) s->Release(r, 0, 1000);
      } else {
        now = std::max(now + 1'000'000, decision.wake_ns);
      }
    }
    EXPECT_EQ(served, id) << spec;
    const std::vector<uint32_t> held = s->AppsHeld();
    EXPECT_EQ(std::count(held.begin(), held.end(), 7u), 0) << spec;
    EXPECT_FALSE(s->EffectiveConfig().value("weights", nlohmann::json::object()).contains("7"))
        << spec;
  }
}

TEST(RemoveApp, WfqKeepsTheWeightOfAQueuedAppUntilItsQueueEmpties) {
  auto s = New("wfq:quantum=64KiB");
  s->SetAppWeight(7, 3);
  s->SetAppWeight(8, 1);
  uint64_t id = 0;
  for (uint64_t k = 0; k < 8; ++k) {
    s->Add(MakeRequest(++id, 1, k * 128 * K, 64 * K, IoOp::kWrite, 0, /*app=*/7));
    s->Add(MakeRequest(++id, 2, k * 128 * K, 64 * K, IoOp::kWrite, 0, /*app=*/8));
  }
  s->RemoveApp(7);
  EXPECT_EQ(s->AppsHeld(), (std::vector<uint32_t>{7, 8}));
  // Still served 3:1 while queued: of the first four dispatches, three are app 7's.
  int sevens = 0;
  for (int i = 0; i < 4; ++i) {
    Dispatch d;
    ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
    sevens += d.file.ino == 1;
  }
  EXPECT_EQ(sevens, 3);
  DrainAll(*s);
  EXPECT_EQ(s->AppsHeld(), (std::vector<uint32_t>{8}));  // 8's weight: it did not leave
  EXPECT_EQ(s->EffectiveConfig()["weights"], nlohmann::json({{"8", 1}}));
  // Not queued when removed: its weight goes at once.
  s->RemoveApp(8);
  EXPECT_TRUE(s->AppsHeld().empty());
}

TEST(EffectiveConfig, EveryBuiltinReadsBackAsItself) {
  SchedulerRegistry reg;
  RegisterBuiltinSchedulers(&reg);
  for (const std::string& n : reg.Names()) {
    auto s = New(n);
    nlohmann::json c = s->EffectiveConfig();
    auto again = New(c.dump());
    ASSERT_NE(again, nullptr) << c.dump();
    EXPECT_EQ(WithoutState(again->EffectiveConfig()), WithoutState(c)) << n;
  }
}

TEST(WriteOrder, TrackedWritesDropToZeroAfterRelease) {
  auto s = New("sjf");
  auto* guard = dynamic_cast<WriteOrderGuard*>(s.get());
  ASSERT_NE(guard, nullptr);
  uint64_t id = 0;
  for (uint64_t f = 1; f <= 20; ++f) {
    for (uint64_t k = 0; k < 10; ++k) {
      s->Add(MakeRequest(++id, f, (k % 4) * 4 * K, 8 * K));  // overlapping writes
    }
    Request append = MakeRequest(++id, f, 0, 4 * K);
    append.mergeable = false;
    s->Add(append);
  }
  EXPECT_EQ(guard->tracked_writes(), id);
  EXPECT_EQ(guard->tracked_files(), 20u);
  EXPECT_EQ(DrainAll(*s), id);
  EXPECT_EQ(guard->tracked_writes(), 0u);
  EXPECT_EQ(guard->tracked_files(), 0u);
}

// A flood of appends costs the guard one dependency each (they chain), not one per write queued
// before it; they still run in arrival order, and ranged writes between them wait for them.
TEST(WriteOrder, AppendsChainInsteadOfWaitingForEveryEarlierWrite) {
  auto s = New("fifo");
  auto* guard = dynamic_cast<WriteOrderGuard*>(s.get());
  ASSERT_NE(guard, nullptr);
  constexpr uint64_t kWrites = 20000;
  for (uint64_t id = 1; id <= kWrites; ++id) {
    Request r = MakeRequest(id, 1, id * 4 * K, 4 * K);
    r.mergeable = id % 10 == 0;  // one in ten a ranged write (none overlap), the rest appends
    s->Add(r);
  }
  EXPECT_LE(guard->dependencies(), 2 * kWrites);  // (20000^2 / 2 before)
  uint64_t last = 0;
  while (s->queued() > 0) {
    Dispatch d;
    ASSERT_EQ(s->Next(0, &d).kind, Decision::Kind::kDispatch);
    ASSERT_EQ(d.request_ids.size(), 1u);
    EXPECT_EQ(d.request_ids[0], last + 1) << "arrival order";
    last = d.request_ids[0];
    s->Release(last, 0, 1000);
  }
  EXPECT_EQ(last, kWrites);
  EXPECT_EQ(guard->tracked_writes(), 0u);
  EXPECT_EQ(guard->dependencies(), 0u);
}

// Drains s one dispatch at a time, releasing each at once; every dispatch must hold one
// write, the next in arrival order. Returns the last id dispatched.
uint64_t DrainOneByOneInArrivalOrder(Scheduler* s) {
  uint64_t last = 0;
  while (s->queued() > 0) {
    Dispatch d;
    if (s->Next(0, &d).kind != Decision::Kind::kDispatch) break;
    EXPECT_EQ(d.request_ids.size(), 1u);
    EXPECT_EQ(d.request_ids[0], last + 1) << "arrival order";
    last = d.request_ids[0];
    s->Release(last, 0, 1000);
  }
  return last;
}

// Rewrites of one region (a checkpoint overwritten while the last one is in flight): each
// contains the one before, so each waits for that one only.
TEST(WriteOrder, RewritesOfOneRegionChain) {
  auto s = New("fifo");
  auto* guard = dynamic_cast<WriteOrderGuard*>(s.get());
  constexpr uint64_t kWrites = 20000;
  for (uint64_t id = 1; id <= kWrites; ++id) s->Add(MakeRequest(id, 1, 0, 64 * K));
  EXPECT_LE(guard->dependencies(), kWrites);  // (20000^2 / 2 before)
  EXPECT_EQ(DrainOneByOneInArrivalOrder(s.get()), kWrites);
  EXPECT_EQ(guard->tracked_writes(), 0u);
  EXPECT_EQ(guard->dependencies(), 0u);
}

// Writes that each overlap every earlier one without containing any (each starts 4 KiB
// further into the same region): past a bounded search a write becomes a barrier, so the
// dependencies stay a bounded number per write.
TEST(WriteOrder, WritesOverlappingManyEarlierOnesStayBounded) {
  auto s = New("fifo");
  auto* guard = dynamic_cast<WriteOrderGuard*>(s.get());
  constexpr uint64_t kWrites = 20000;
  for (uint64_t id = 1; id <= kWrites; ++id) {
    s->Add(MakeRequest(id, 1, id * 4 * K, 256 * 1024 * K - id * 4 * K));
  }
  EXPECT_LE(guard->dependencies(), 200 * kWrites);  // (20000^2 / 2 before)
  EXPECT_EQ(DrainOneByOneInArrivalOrder(s.get()), kWrites);
  EXPECT_EQ(guard->tracked_writes(), 0u);
  EXPECT_EQ(guard->dependencies(), 0u);
}

// Positional writes of no bytes change nothing: the guard does not track them (thousands at
// one offset would otherwise be walked one by one at every release).
TEST(WriteOrder, ZeroLengthWritesAreNotTracked) {
  auto s = New("fifo");
  auto* guard = dynamic_cast<WriteOrderGuard*>(s.get());
  s->Add(MakeRequest(1, 1, 0, 8 * K));
  for (uint64_t id = 2; id <= 5000; ++id) s->Add(MakeRequest(id, 1, 0, 0));
  EXPECT_EQ(guard->tracked_writes(), 1u);
  EXPECT_EQ(guard->dependencies(), 0u);
  EXPECT_EQ(DrainAll(*s), 5000u);
  EXPECT_EQ(guard->tracked_writes(), 0u);
  EXPECT_EQ(guard->tracked_files(), 0u);
}

// Random writes (some appends) over a small file, dispatched and released in random order:
// no write is dispatched while an earlier overlapping one (any earlier one, for an append)
// is unreleased, and every write is dispatched in the end.
TEST(WriteOrder, NoWriteOvertakesAnEarlierOverlappingOne) {
  for (const char* spec : {"fifo", "to-agg", "sjf"}) {
    auto s = New(spec);
    auto* guard = dynamic_cast<WriteOrderGuard*>(s.get());
    std::mt19937_64 random(7);
    struct Write {
      uint64_t offset, end;
      bool append;
    };
    std::vector<Write> writes(1);  // by id; [0] unused
    std::set<uint64_t> unreleased;
    std::vector<uint64_t> running;
    auto overlap = [](const Write& a, const Write& b) {
      return a.append || b.append || (a.offset < b.end && b.offset < a.end);
    };
    for (int step = 0; step < 30000 || !unreleased.empty(); ++step) {
      const unsigned roll = random() % 8;
      if (step < 30000 && roll < 3) {
        const uint64_t id = writes.size();
        const uint64_t offset = random() % 64 * 4 * K;
        Request r = MakeRequest(id, 1, offset, (1 + random() % 16) * 4 * K);
        r.mergeable = random() % 50 != 0;
        writes.push_back({r.offset, r.offset + r.length, !r.mergeable});
        unreleased.insert(id);
        s->Add(r);
      } else if (roll < 6 || running.empty()) {
        Dispatch d;
        if (s->Next(0, &d).kind != Decision::Kind::kDispatch) {
          // Nothing running to release: every write must have been dispatched.
          if (running.empty()) {
            ASSERT_TRUE(unreleased.empty()) << spec << ": writes stuck";
          }
          continue;
        }
        for (uint64_t id : d.request_ids) {
          for (auto e = unreleased.begin(); e != unreleased.end() && *e < id; ++e) {
            ASSERT_FALSE(overlap(writes[*e], writes[id]))
                << spec << ": write " << id << " overtook " << *e;
          }
          running.push_back(id);
        }
      } else {
        const size_t pick = random() % running.size();
        const uint64_t id = running[pick];
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
        unreleased.erase(id);
        s->Release(id, 0, 1000);
      }
    }
    EXPECT_EQ(guard->tracked_writes(), 0u) << spec;
    EXPECT_EQ(guard->dependencies(), 0u) << spec;
  }
}

}  // namespace
}  // namespace iorelay::sched

namespace iorelay::sched {
namespace {

TEST(Dynamic, CandidatesCarryTheirOwnParameters) {
  const std::string spec =
      "dynamic:candidates=fifo+aioli(quantum=128KiB;wait=0)+sjf(max_wait=20ms;max_dispatch_"
      "requests=8),max_dispatch_requests=16";
  auto s = New(spec);
  ASSERT_NE(s, nullptr);
  nlohmann::json c = s->EffectiveConfig();
  const nlohmann::json& arms = c["state"]["candidates"];
  EXPECT_EQ(arms["fifo"]["name"], "fifo");
  EXPECT_EQ(arms["aioli(quantum=128KiB;wait=0)"]["quantum"], "128KiB");
  EXPECT_EQ(arms["aioli(quantum=128KiB;wait=0)"]["wait"], "0ns");
  EXPECT_EQ(arms["aioli(quantum=128KiB;wait=0)"]["max_dispatch_requests"], 16);  // shared cap
  const nlohmann::json& sjf = arms["sjf(max_wait=20ms;max_dispatch_requests=8)"];
  EXPECT_EQ(sjf["max_wait"], "20ms");
  EXPECT_EQ(sjf["max_dispatch_requests"], 8);  // its own wins
  auto again = New(c.dump());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->EffectiveConfig(), c);
  SchedulerRegistry reg;
  RegisterBuiltinSchedulers(&reg);
  for (const char* bad : {"dynamic:candidates=sjf(bogus=1)", "dynamic:candidates=aioli(quantum=1",
                          "dynamic:candidates=aioli)", "dynamic:candidates=sjf(max_wait)",
                          "dynamic:candidates=(x=1)"}) {
    EXPECT_EQ(reg.CreateFromSpec(bad).status().code(), EINVAL) << bad;
  }
}

}  // namespace
}  // namespace iorelay::sched
