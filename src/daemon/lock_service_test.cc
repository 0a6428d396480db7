// LockService: F_SETLKW parks without blocking and is granted on release; EDEADLK on cycles.
#include "daemon/lock_service.h"

#include <gtest/gtest.h>

#include <vector>

namespace iorelay::daemon {
namespace {

proto::LockRequest Req(int cmd, int16_t type, int64_t start, int64_t length) {
  return proto::LockRequest{1, 2, cmd, type, start, length, 7};
}

struct Answer {
  bool called = false;
  int err = -1;
  proto::LockReply reply;
};

LockService::Done Into(Answer* a) {
  return [a](int err, const proto::LockReply& r) {
    a->called = true;
    a->err = err;
    a->reply = r;
  };
}

TEST(LockService, SetlkConflictIsEagain) {
  LockService s;
  Answer a, b;
  s.Lock(Req(F_SETLK, F_WRLCK, 0, 10), 1, Into(&a));
  s.Lock(Req(F_SETLK, F_RDLCK, 5, 1), 2, Into(&b));
  EXPECT_EQ(a.err, 0);
  EXPECT_EQ(b.err, EAGAIN);
}

TEST(LockService, FullTableIsEnolckAndUnlockStillWorks) {
  LockService s(/*max_spans=*/2);
  Answer a, b, c, d;
  s.Lock(Req(F_SETLK, F_WRLCK, 0, 10), 1, Into(&a));
  s.Lock(Req(F_SETLK, F_WRLCK, 20, 10), 1, Into(&b));
  s.Lock(Req(F_SETLK, F_WRLCK, 40, 10), 1, Into(&c));
  EXPECT_EQ(a.err, 0);
  EXPECT_EQ(b.err, 0);
  EXPECT_EQ(c.err, ENOLCK);
  s.Lock(Req(F_SETLK, F_UNLCK, 0, 10), 1, Into(&d));
  EXPECT_EQ(d.err, 0);
  Answer e;
  s.Lock(Req(F_SETLK, F_WRLCK, 40, 10), 1, Into(&e));
  EXPECT_EQ(e.err, 0);
}

TEST(LockService, GroupAtItsShareIsEnolckWhileAnotherGroupLocks) {
  LockService s;
  const LockShare job_a{/*group=*/5, /*max_spans=*/2};
  const LockShare job_b{/*group=*/6, /*max_spans=*/2};
  std::vector<Answer> a(4), b(2);
  // Two owners (sessions) of group 5 hold its two ranges between them.
  s.Lock(Req(F_SETLK, F_WRLCK, 0, 10), 1, Into(&a[0]), job_a);
  s.Lock(Req(F_SETLK, F_WRLCK, 20, 10), 2, Into(&a[1]), job_a);
  s.Lock(Req(F_SETLK, F_WRLCK, 40, 10), 1, Into(&a[2]), job_a);
  EXPECT_EQ(a[0].err, 0);
  EXPECT_EQ(a[1].err, 0);
  EXPECT_EQ(a[2].err, ENOLCK);
  EXPECT_EQ(s.spans(5), 2u);
  // Group 6 locks as it likes, up to its own share.
  s.Lock(Req(F_SETLK, F_WRLCK, 60, 10), 3, Into(&b[0]), job_b);
  s.Lock(Req(F_SETLK, F_RDLCK, 80, 10), 3, Into(&b[1]), job_b);
  EXPECT_EQ(b[0].err, 0);
  EXPECT_EQ(b[1].err, 0);
  EXPECT_EQ(s.spans(6), 2u);
  // An unlock gives its range back to the share: the count is of what is held.
  s.Lock(Req(F_SETLK, F_UNLCK, 0, 10), 1, Into(&a[3]), job_a);
  EXPECT_EQ(s.spans(5), 1u);
  Answer again;
  s.Lock(Req(F_SETLK, F_WRLCK, 40, 10), 1, Into(&again), job_a);
  EXPECT_EQ(again.err, 0);
  // The session ends: its ranges leave the group's count.
  s.ReleaseOwner(1);
  s.ReleaseOwner(2);
  EXPECT_EQ(s.spans(5), 0u);
  EXPECT_EQ(s.spans(6), 2u);
  EXPECT_EQ(s.spans(), 2u);
}

TEST(LockService, SetlkwParksUntilUnlock) {
  LockService s;
  Answer a, b, u;
  s.Lock(Req(F_SETLK, F_WRLCK, 0, 10), 1, Into(&a));
  s.Lock(Req(F_SETLKW, F_WRLCK, 0, 10), 2, Into(&b));
  EXPECT_FALSE(b.called);
  EXPECT_EQ(s.parked(), 1u);
  s.Lock(Req(F_SETLK, F_UNLCK, 0, 5), 1, Into(&u));  // partial: still blocked
  EXPECT_FALSE(b.called);
  s.UnlockAll(sched::FileKey{1, 2}, 1);
  EXPECT_TRUE(b.called);
  EXPECT_EQ(b.err, 0);
  EXPECT_EQ(s.parked(), 0u);
}

TEST(LockService, ReleaseWakesOnlyItsOwnFilesWaits) {
  LockService s;
  proto::LockRequest other_file = Req(F_SETLK, F_WRLCK, 0, 10);
  other_file.ino = 3;
  Answer a, b, c, d;
  s.Lock(Req(F_SETLK, F_WRLCK, 0, 10), 1, Into(&a));
  s.Lock(other_file, 1, Into(&b));
  s.Lock(Req(F_SETLKW, F_WRLCK, 0, 10), 2, Into(&c));
  other_file.cmd = F_SETLKW;
  s.Lock(other_file, 2, Into(&d));
  EXPECT_EQ(s.parked(), 2u);
  s.UnlockAll(sched::FileKey{1, 3}, 1);
  EXPECT_TRUE(d.called);
  EXPECT_EQ(d.err, 0);
  EXPECT_FALSE(c.called);
  EXPECT_EQ(s.parked(), 1u);
  s.ReleaseOwner(1);
  EXPECT_TRUE(c.called);
  EXPECT_EQ(c.err, 0);
  EXPECT_EQ(s.parked(), 0u);
}

TEST(LockService, GetlkReportsHolder) {
  LockService s;
  Answer a, g;
  s.Lock(Req(F_SETLK, F_RDLCK, 100, 0), 1, Into(&a));
  s.Lock(Req(F_GETLK, F_WRLCK, 0, 0), 2, Into(&g));
  EXPECT_EQ(g.err, 0);
  EXPECT_EQ(g.reply.type, F_RDLCK);
  EXPECT_EQ(g.reply.start, 100);
  EXPECT_EQ(g.reply.length, 0);
  EXPECT_EQ(g.reply.pid, 7);
  s.Lock(Req(F_GETLK, F_RDLCK, 0, 0), 2, Into(&g));
  EXPECT_EQ(g.reply.type, F_UNLCK);
}

TEST(LockService, DeadlockIsDetected) {
  LockService s;
  Answer a, b, wa, wb;
  s.Lock(Req(F_SETLK, F_WRLCK, 0, 10), 1, Into(&a));
  s.Lock(Req(F_SETLK, F_WRLCK, 20, 10), 2, Into(&b));
  s.Lock(Req(F_SETLKW, F_WRLCK, 20, 10), 1, Into(&wa));  // 1 waits for 2
  EXPECT_FALSE(wa.called);
  s.Lock(Req(F_SETLKW, F_WRLCK, 0, 10), 2, Into(&wb));  // 2 would wait for 1
  EXPECT_EQ(wb.err, EDEADLK);
  s.ReleaseOwner(2);
  EXPECT_EQ(wa.err, 0);
}

TEST(LockService, OwnerGoneEndsItsWaitsAndCancelAll) {
  LockService s;
  Answer a, w1, w2;
  s.Lock(Req(F_SETLK, F_WRLCK, 0, 0), 1, Into(&a));
  s.Lock(Req(F_SETLKW, F_RDLCK, 0, 1), 2, Into(&w1));
  s.Lock(Req(F_SETLKW, F_RDLCK, 0, 1), 3, Into(&w2));
  s.ReleaseOwner(2);
  EXPECT_EQ(w1.err, EINTR);
  EXPECT_FALSE(w2.called);
  s.CancelAll(EINTR);
  EXPECT_EQ(w2.err, EINTR);
}

// One owner's parked waits are capped (ENOLCK beyond, as for a full table); other owners
// still park, and the owner parks again once its waits end.
TEST(LockService, ParkedWaitsPerOwnerAreCapped) {
  LockService s;
  Answer held;
  s.Lock(Req(F_SETLK, F_WRLCK, 0, 0), 1, Into(&held));
  std::vector<Answer> waits(kMaxParkedPerOwner + 1);
  for (size_t i = 0; i < waits.size(); ++i) {
    s.Lock(Req(F_SETLKW, F_RDLCK, static_cast<int64_t>(i), 1), 2, Into(&waits[i]));
  }
  EXPECT_EQ(s.parked(), kMaxParkedPerOwner);
  EXPECT_EQ(waits.back().err, ENOLCK);
  Answer other;
  s.Lock(Req(F_SETLKW, F_RDLCK, 0, 1), 3, Into(&other));
  EXPECT_FALSE(other.called);
  Answer unlock;
  s.Lock(Req(F_SETLK, F_UNLCK, 0, 0), 1, Into(&unlock));
  EXPECT_EQ(waits.front().err, 0);
  EXPECT_EQ(other.err, 0);
  EXPECT_EQ(s.parked(), 0u);
  Answer again, blocked;
  s.Lock(Req(F_SETLK, F_WRLCK, 1000, 1), 3, Into(&again));
  s.Lock(Req(F_SETLKW, F_WRLCK, 1000, 1), 2, Into(&blocked));
  EXPECT_FALSE(blocked.called);
  s.ReleaseOwner(2);
  EXPECT_EQ(blocked.err, EINTR);
  EXPECT_EQ(s.parked(), 0u);
}

// A cycle through several owners and files is found, whichever owner's waits it follows;
// waits that ended (granted or their owner gone) no longer count.
TEST(LockService, DeadlockThroughThreeOwnersAndFiles) {
  LockService s;
  auto on = [](uint64_t file, int cmd, int16_t type) {
    proto::LockRequest r = Req(cmd, type, 0, 1);
    r.ino = file;
    return r;
  };
  Answer h1, h2, h3, w1, w2, w3;
  s.Lock(on(11, F_SETLK, F_WRLCK), 1, Into(&h1));
  s.Lock(on(12, F_SETLK, F_WRLCK), 2, Into(&h2));
  s.Lock(on(13, F_SETLK, F_WRLCK), 3, Into(&h3));
  s.Lock(on(12, F_SETLKW, F_WRLCK), 1, Into(&w1));  // 1 waits for 2
  s.Lock(on(13, F_SETLKW, F_WRLCK), 2, Into(&w2));  // 2 waits for 3
  EXPECT_FALSE(w1.called);
  EXPECT_FALSE(w2.called);
  s.Lock(on(11, F_SETLKW, F_WRLCK), 3, Into(&w3));  // 3 would wait for 1: a cycle
  EXPECT_EQ(w3.err, EDEADLK);
  s.ReleaseOwner(2);  // 1 gets file 12; 2's wait ends
  EXPECT_EQ(w1.err, 0);
  EXPECT_EQ(w2.err, EINTR);
  Answer w3again;
  s.Lock(on(11, F_SETLKW, F_WRLCK), 3, Into(&w3again));  // 1 waits for nobody now
  EXPECT_FALSE(w3again.called);
  s.ReleaseOwner(1);
  EXPECT_EQ(w3again.err, 0);
  EXPECT_EQ(s.parked(), 0u);
}

}  // namespace
}  // namespace iorelay::daemon
