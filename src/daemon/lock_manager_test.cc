// POSIX record-lock semantics of LockManager: conflicts, EOF ranges, splitting, merging.
#include "daemon/lock_manager.h"

#include <gtest/gtest.h>

namespace iorelay::daemon {
namespace {

const sched::FileKey kFile{1, 2};

LockSpan Span(uint64_t owner, int64_t start, int64_t length) {
  LockSpan s = *MakeSpan(start, length);
  s.owner = owner;
  s.pid = static_cast<int32_t>(owner);
  return s;
}

TEST(MakeSpan, LengthZeroNegativeAndInvalid) {
  EXPECT_EQ(MakeSpan(10, 0)->end, kLockEof);
  LockSpan back = *MakeSpan(10, -4);
  EXPECT_EQ(back.start, 6);
  EXPECT_EQ(back.end, 10);
  EXPECT_EQ(MakeSpan(2, -4).status().code(), EINVAL);
  EXPECT_EQ(MakeSpan(-1, 5).status().code(), EINVAL);
  EXPECT_EQ(MakeSpan(kLockEof - 1, 5).status().code(), EOVERFLOW);
  // Regression: start + length overflowed (undefined) and made a span never released.
  EXPECT_EQ(MakeSpan(std::numeric_limits<int64_t>::min(), -1).status().code(), EINVAL);
  EXPECT_EQ(MakeSpan(-5, -1).status().code(), EINVAL);
  EXPECT_EQ(MakeSpan(5, std::numeric_limits<int64_t>::min()).status().code(), EINVAL);
}

TEST(LockManager, CountsSpansOverAllFiles) {
  LockManager m;
  EXPECT_TRUE(m.Apply(kFile, Span(1, 0, 10), F_WRLCK));
  EXPECT_TRUE(m.Apply(sched::FileKey{1, 3}, Span(1, 0, 10), F_WRLCK));
  EXPECT_EQ(m.spans(), 2u);
  EXPECT_TRUE(m.Apply(kFile, Span(1, 4, 2), F_UNLCK));  // splits one span in two
  EXPECT_EQ(m.spans(), 3u);
  EXPECT_EQ(m.ReleaseOwner(1).size(), 2u);
  EXPECT_EQ(m.spans(), 0u);
}

TEST(LockManager, ReadersShareWritersExclude) {
  LockManager m;
  EXPECT_TRUE(m.Apply(kFile, Span(1, 0, 100), F_RDLCK));
  EXPECT_TRUE(m.Apply(kFile, Span(2, 50, 100), F_RDLCK));
  EXPECT_FALSE(m.Apply(kFile, Span(3, 90, 1), F_WRLCK));
  EXPECT_TRUE(m.Apply(kFile, Span(3, 150, 10), F_WRLCK));
  LockSpan want = Span(3, 0, 0);
  want.type = F_WRLCK;
  auto c = m.FindConflict(kFile, want);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->owner, 1u);
  want = Span(1, 120, 0);
  want.type = F_RDLCK;
  c = m.FindConflict(kFile, want);  // reader vs owner 3's write lock at 150
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->owner, 3u);
  EXPECT_EQ(c->type, F_WRLCK);
}

TEST(LockManager, OwnLocksNeverConflictAndUpgrade) {
  LockManager m;
  EXPECT_TRUE(m.Apply(kFile, Span(1, 0, 100), F_RDLCK));
  EXPECT_TRUE(m.Apply(kFile, Span(1, 20, 10), F_WRLCK));  // upgrade a middle part
  auto locks = m.Locks(kFile);
  ASSERT_EQ(locks.size(), 3u);
  EXPECT_EQ(locks[0].type, F_RDLCK);
  EXPECT_EQ(locks[0].end, 20);
  EXPECT_EQ(locks[1].type, F_WRLCK);
  EXPECT_EQ(locks[1].start, 20);
  EXPECT_EQ(locks[1].end, 30);
  EXPECT_EQ(locks[2].start, 30);
  EXPECT_EQ(locks[2].end, 100);
}

TEST(LockManager, UnlockOfSubRangeSplits) {
  LockManager m;
  EXPECT_TRUE(m.Apply(kFile, Span(1, 0, 0), F_WRLCK));  // whole file
  EXPECT_TRUE(m.Apply(kFile, Span(1, 10, 5), F_UNLCK));
  auto locks = m.Locks(kFile);
  ASSERT_EQ(locks.size(), 2u);
  EXPECT_EQ(locks[0].start, 0);
  EXPECT_EQ(locks[0].end, 10);
  EXPECT_EQ(locks[1].start, 15);
  EXPECT_EQ(locks[1].end, kLockEof);
  EXPECT_TRUE(m.Apply(kFile, Span(2, 10, 5), F_WRLCK));        // the hole is free for others
  EXPECT_FALSE(m.Apply(kFile, Span(2, 1000000, 1), F_RDLCK));  // EOF range still held
}

TEST(LockManager, AdjacentRangesOfSameTypeMerge) {
  LockManager m;
  EXPECT_TRUE(m.Apply(kFile, Span(1, 0, 10), F_WRLCK));
  EXPECT_TRUE(m.Apply(kFile, Span(1, 20, 10), F_WRLCK));
  EXPECT_TRUE(m.Apply(kFile, Span(1, 10, 10), F_WRLCK));
  auto locks = m.Locks(kFile);
  ASSERT_EQ(locks.size(), 1u);
  EXPECT_EQ(locks[0].start, 0);
  EXPECT_EQ(locks[0].end, 30);
  EXPECT_TRUE(m.Apply(kFile, Span(1, 30, 5), F_RDLCK));  // other type: no merge
  EXPECT_EQ(m.Locks(kFile).size(), 2u);
}

TEST(LockManager, ReleaseFileAndOwner) {
  LockManager m;
  sched::FileKey other{1, 3};
  EXPECT_TRUE(m.Apply(kFile, Span(1, 0, 10), F_WRLCK));
  EXPECT_TRUE(m.Apply(other, Span(1, 0, 10), F_WRLCK));
  EXPECT_TRUE(m.Apply(kFile, Span(2, 20, 10), F_WRLCK));
  m.ReleaseFile(kFile, 1);
  EXPECT_EQ(m.Locks(kFile).size(), 1u);
  EXPECT_EQ(m.Locks(other).size(), 1u);
  auto touched = m.ReleaseOwner(1);
  ASSERT_EQ(touched.size(), 1u);
  EXPECT_EQ(touched[0], other);
  EXPECT_TRUE(m.Locks(other).empty());
}

TEST(LockManager, FailedApplyChangesNothing) {
  LockManager m;
  EXPECT_TRUE(m.Apply(kFile, Span(1, 0, 10), F_RDLCK));
  EXPECT_TRUE(m.Apply(kFile, Span(2, 5, 10), F_RDLCK));
  EXPECT_FALSE(m.Apply(kFile, Span(1, 0, 20), F_WRLCK));  // owner 2 reads at 5..15
  auto locks = m.Locks(kFile);
  ASSERT_EQ(locks.size(), 2u);
  EXPECT_EQ(locks[0].type, F_RDLCK);
}

}  // namespace
}  // namespace iorelay::daemon
