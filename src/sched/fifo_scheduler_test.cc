// FIFO order, one request per dispatch, and the registry.
#include "sched/fifo_scheduler.h"

#include <gtest/gtest.h>

#include "sched/registry.h"

namespace iorelay::sched {
namespace {

Request Make(uint64_t id, uint64_t offset, IoOp op = IoOp::kWrite, int64_t t = 0) {
  Request r;
  r.id = id;
  r.file = FileKey{1, 2};
  r.op = op;
  r.offset = offset;
  r.length = 4096;
  r.arrival_ns = t;
  return r;
}

TEST(FifoScheduler, IdleWhenEmpty) {
  FifoScheduler s;
  Dispatch d;
  EXPECT_EQ(s.Next(0, &d).kind, Decision::Kind::kIdle);
}

TEST(FifoScheduler, ArrivalOrderNoMerging) {
  ManualClock clock;
  FifoScheduler s;
  s.Add(Make(7, 4096, IoOp::kWrite, clock.NowNs()));
  clock.Advance(10);
  s.Add(Make(3, 0, IoOp::kWrite, clock.NowNs()));  // contiguous, but FIFO never merges
  clock.Advance(10);
  s.Add(Make(5, 0, IoOp::kRead, clock.NowNs()));
  EXPECT_EQ(s.queued(), 3u);
  Dispatch d;
  std::vector<uint64_t> order;
  while (s.Next(clock.NowNs(), &d).kind == Decision::Kind::kDispatch) {
    ASSERT_EQ(d.request_ids.size(), 1u);
    EXPECT_EQ(d.length, 4096u);
    order.push_back(d.request_ids[0]);
    s.Release(d.request_ids[0], 0, 100);
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{7, 3, 5}));
  EXPECT_EQ(s.queued(), 0u);
}

TEST(FifoScheduler, DispatchDescribesTheRequest) {
  FifoScheduler s;
  s.Add(Make(1, 8192, IoOp::kRead));
  Dispatch d;
  ASSERT_EQ(s.Next(0, &d).kind, Decision::Kind::kDispatch);
  EXPECT_EQ(d.file, (FileKey{1, 2}));
  EXPECT_EQ(d.op, IoOp::kRead);
  EXPECT_EQ(d.offset, 8192u);
}

TEST(SchedulerRegistry, CreatesByNameAndRejectsUnknown) {
  SchedulerRegistry reg;
  RegisterBuiltinSchedulers(&reg);
  auto s = reg.Create("fifo");
  ASSERT_TRUE(s.ok());
  EXPECT_STREQ((*s)->name(), "fifo");
  auto bad = reg.Create("nope");
  EXPECT_EQ(bad.status().code(), EINVAL);
  EXPECT_NE(bad.status().message().find("fifo"), std::string::npos);
  EXPECT_EQ(reg.Register("fifo", [] { return std::make_unique<FifoScheduler>(); }).code(), EEXIST);
}

}  // namespace
}  // namespace iorelay::sched
