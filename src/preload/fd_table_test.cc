// Tests of the forwarded-descriptor table: membership, reference counting, ranges.
#include "preload/fd_table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace iorelay::preload {
namespace {

std::atomic<int> g_released{0};
int CountingRelease(FdEntry* e) {
  g_released.fetch_add(1);
  delete e;
  return -5;
}

class FdTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(table_.Init(64));
    table_.SetReleaser(&CountingRelease);
    g_released = 0;
  }
  FdTable table_;
};

TEST_F(FdTableTest, EmptyTableContainsNothing) {
  EXPECT_FALSE(table_.Contains(-1));
  EXPECT_FALSE(table_.Contains(0));
  EXPECT_FALSE(table_.Contains(63));
  EXPECT_FALSE(table_.Contains(64));
  EXPECT_FALSE(table_.Contains(1 << 30));
  EXPECT_FALSE(table_.Acquire(3));
}

TEST_F(FdTableTest, InstallAcquireRemove) {
  auto* e = new FdEntry;
  e->path = "/fwd/a";
  EXPECT_EQ(table_.Install(5, e), nullptr);
  EXPECT_TRUE(table_.Contains(5));
  {
    FdTable::Ref r = table_.Acquire(5);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->path, "/fwd/a");
    EXPECT_EQ(r->refs.load(), 2);
  }
  EXPECT_EQ(e->refs.load(), 1);
  FdEntry* removed = table_.Remove(5);
  EXPECT_EQ(removed, e);
  EXPECT_FALSE(table_.Contains(5));
  EXPECT_EQ(table_.Release(removed), -5);  // the releaser's result, as close() reports it
  EXPECT_EQ(g_released.load(), 1);
}

TEST_F(FdTableTest, CloseWhileInUseFreesAfterLastUser) {
  table_.Install(7, new FdEntry);
  {
    FdTable::Ref in_flight = table_.Acquire(7);
    EXPECT_EQ(table_.Release(table_.Remove(7)), 0);  // not the last reference
    EXPECT_EQ(g_released.load(), 0);
    EXPECT_FALSE(table_.Contains(7));
  }
  EXPECT_EQ(g_released.load(), 1);
}

TEST_F(FdTableTest, InstallReturnsReplacedEntry) {
  auto* a = new FdEntry;
  auto* b = new FdEntry;
  table_.Install(3, a);
  EXPECT_EQ(table_.Install(3, b), a);
  table_.Release(a);
  table_.Release(table_.Remove(3));
  EXPECT_EQ(g_released.load(), 2);
}

TEST_F(FdTableTest, ListInRange) {
  for (int fd : {3, 9, 10, 40}) table_.Install(fd, new FdEntry);
  EXPECT_EQ(table_.ListInRange(0, ~0U), (std::vector<int>{3, 9, 10, 40}));
  EXPECT_EQ(table_.ListInRange(4, 10), (std::vector<int>{9, 10}));
  EXPECT_EQ(table_.ListInRange(41, 100), std::vector<int>{});
  for (int fd : {3, 9, 10, 40}) table_.Release(table_.Remove(fd));
}

TEST_F(FdTableTest, ConcurrentAcquireAndClose) {
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop.load()) {
      FdTable::Ref r = table_.Acquire(4);
      if (r) {
        EXPECT_GE(r->refs.load(), 1);
      }
    }
  });
  for (int i = 0; i < 20000; ++i) {
    table_.Install(4, new FdEntry);
    table_.Release(table_.Remove(4));
  }
  stop = true;
  reader.join();
  EXPECT_EQ(g_released.load(), 20000);
}

}  // namespace
}  // namespace iorelay::preload
