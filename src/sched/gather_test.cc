// Gather in virtual time: closed-loop clients, as fio's synchronous jobs, through one slot.
#include "sched/gather.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "testutil/sched_driver_testutil.h"

namespace iorelay::sched {
namespace {

using testing::MakeRequest;
using testing::New;
constexpr uint64_t K = 1024;

struct Loop {
  std::vector<size_t> sizes;       // requests per dispatch, in order
  std::vector<int64_t> starts_ns;  // when each dispatch started
};

// `clients` jobs (clients 1..n) write one strided file (job c's i-th 8 KiB write at
// (i * clients + c) * 8 KiB), each issuing its next write `think_ns(c)` after its previous
// one was answered, until `writes(c)` are done. One slot; a dispatch takes 100 us.
Loop RunClosedLoop(Scheduler& s, int clients, const std::function<int64_t(int)>& think_ns,
                   const std::function<int(int)>& writes) {
  constexpr int64_t kService = 100'000;
  std::multimap<int64_t, int> returns;  // time -> client issuing then
  std::vector<int> issued(clients, 0);
  std::map<uint64_t, int> client_of;
  for (int c = 0; c < clients; ++c) returns.emplace(think_ns(c), c);
  uint64_t next_id = 1;
  int64_t now = 0;
  int64_t busy_until = -1;  // the slot's dispatch ends then (-1: free)
  Dispatch in_flight;
  Loop loop;
  for (int steps = 0; steps < 1'000'000; ++steps) {
    // Completions first, then arrivals due by now, then a decision.
    if (busy_until >= 0 && busy_until <= now) {
      for (uint64_t id : in_flight.request_ids) {
        s.Release(id, 0, kService);
        const int c = client_of[id];
        if (issued[c] < writes(c)) returns.emplace(now + think_ns(c), c);
      }
      busy_until = -1;
    }
    while (!returns.empty() && returns.begin()->first <= now) {
      const int c = returns.begin()->second;
      returns.erase(returns.begin());
      const uint64_t offset = (static_cast<uint64_t>(issued[c]++) * clients + c) * 8 * K;
      client_of[next_id] = c;
      Request r = MakeRequest(next_id++, 1, offset, 8 * K, IoOp::kWrite, now);
      r.client = static_cast<uint64_t>(c) + 1;
      s.Add(r);
    }
    int64_t wake = INT64_MAX;
    if (busy_until < 0) {
      const Decision d = s.Next(now, &in_flight);
      if (d.kind == Decision::Kind::kDispatch) {
        busy_until = now + kService;
        loop.sizes.push_back(in_flight.request_ids.size());
        loop.starts_ns.push_back(now);
      } else if (d.kind == Decision::Kind::kSleepUntil) {
        EXPECT_GT(d.wake_ns, now);
        wake = d.wake_ns;
      }
    }
    if (busy_until >= 0) wake = std::min(wake, busy_until);
    if (!returns.empty()) wake = std::min(wake, returns.begin()->first);
    if (wake == INT64_MAX) return loop;
    now = wake;
  }
  ADD_FAILURE() << "the loop did not end";
  return loop;
}

double MeanFrom(const std::vector<size_t>& v, size_t from) {
  double sum = 0;
  for (size_t i = from; i < v.size(); ++i) sum += static_cast<double>(v[i]);
  return v.size() > from ? sum / static_cast<double>(v.size() - from) : 0;
}

// Client c comes back 8 us * c after its answer: a convoy's requests return spread over
// 120 us, longer than a dispatch, as 16 woken processes on two cores do.
int64_t Spread(int c) { return 8'000 * (c + 1); }

TEST(Gather, KeepsAConvoyWholeWhereDispatchingAtOnceSplitsIt) {
  auto plain = New("sjf");
  auto gathering = New("sjf:gather=1ms");
  const auto writes = [](int) { return 64; };
  const Loop split = RunClosedLoop(*plain, 16, Spread, writes);
  const Loop whole = RunClosedLoop(*gathering, 16, Spread, writes);
  // Once the estimate has seen all 16 outstanding, every dispatch holds all 16.
  EXPECT_LT(MeanFrom(split.sizes, 8), 12.0);
  // The first two dispatches go before everyone has been answered once; the convoy is whole
  // from then on (two laggards of the start go last).
  ASSERT_EQ(whole.sizes.size(), 66u);
  for (size_t i = 2; i + 1 < whole.sizes.size(); ++i) EXPECT_EQ(whole.sizes[i], 16u) << i;
  // Fewer calls, each with the same cost: the run ends sooner.
  EXPECT_LT(whole.starts_ns.back(), split.starts_ns.back());
}

TEST(Gather, WaitsNoLongerThanItsBoundForAClientThatStopped) {
  auto s = New("sjf:gather=300us");
  // Client 15 stops after 8 writes; the others go on to 128.
  const Loop loop = RunClosedLoop(*s, 16, Spread, [](int c) { return c == 15 ? 8 : 128; });
  // Every gap between dispatches is at most service + wait (+ the last return's think time).
  for (size_t i = 1; i < loop.starts_ns.size(); ++i) {
    EXPECT_LE(loop.starts_ns[i] - loop.starts_ns[i - 1], 100'000 + 300'000 + 128'000)
        << "dispatch " << i;
  }
  // It is waited for once, after its last answer; the 15 others are dispatched whole, with
  // no wait beyond their own return (at most 120 us after the 100 us dispatch).
  ASSERT_GE(loop.sizes.size(), 110u);
  for (size_t i = loop.sizes.size() - 100; i < loop.sizes.size(); ++i) {
    EXPECT_EQ(loop.sizes[i], 15u) << "dispatch " << i;
    EXPECT_LE(loop.starts_ns[i] - loop.starts_ns[i - 1], 100'000 + 120'000) << "dispatch " << i;
  }
}

TEST(Gather, IsAParameterOfEveryAlgorithmAndShowsInTheConfig) {
  for (const char* name : {"fifo", "to-agg", "sjf", "aioli", "mlf", "twins", "wfq"}) {
    auto s = New(std::string(name) + ":gather=250us");
    ASSERT_NE(s, nullptr) << name;
    EXPECT_EQ(s->EffectiveConfig()["gather"], "250us") << name;
  }
  SchedulerRegistry reg;
  RegisterBuiltinSchedulers(&reg);
  auto bad = reg.CreateFromSpec("sjf:gather=soon");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("gather"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(New("sjf")->EffectiveConfig().contains("gather"));
}

}  // namespace
}  // namespace iorelay::sched
