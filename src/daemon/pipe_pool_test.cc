// PipePool: pipes lent, kept when given back empty, closed when given back holding bytes, the
// bounds on pipes lent at once (in all and to one holder), and MovePiped taking exactly what a
// request announced or refusing.
#include "daemon/pipe_pool.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

namespace iorelay::daemon {
namespace {

constexpr size_t kBytes = 1 << 20;

TEST(PipePool, LendsEmptyPipesAndClosesThemAfter) {
  PipePool pool(2 * kBytes, kBytes);
  ASSERT_GE(pool.pipe_bytes(), kBytes);
  std::atomic<uint32_t> holder{0};
  int read_fd = -1;
  {
    Result<PooledPipe> p = pool.Get(&holder);
    EXPECT_EQ(holder.load(), 1u);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_GE(p->pipe().bytes(), pool.pipe_bytes());
    EXPECT_EQ(p->pipe().Held(), 0u);
    ASSERT_EQ(::write(p->pipe().write_fd(), "x", 1), 1);
    read_fd = p->pipe().read_fd();
  }  // closed: it held a byte
  EXPECT_EQ(::fcntl(read_fd, F_GETFD), -1);
  EXPECT_EQ(holder.load(), 0u);
}

// An empty pipe given back is lent again, up to kMaxIdle of them; the rest are closed.
TEST(PipePool, KeepsUpToKMaxIdleEmptyPipesForTheNextRequests) {
  PipePool pool(kBytes, kBytes);
  std::atomic<uint32_t> holder{0};
  std::vector<PooledPipe> lent;
  std::vector<int> read_fds;
  for (size_t i = 0; i < PipePool::kMaxIdle + 2; ++i) {
    Result<PooledPipe> p = pool.Get(&holder);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    read_fds.push_back(p->pipe().read_fd());
    lent.push_back(std::move(*p));
  }
  // The first kMaxIdle go back to the pool (given back in this order); the last two close.
  for (PooledPipe& p : lent) p.Reset();
  EXPECT_EQ(holder.load(), 0u);
  size_t open = 0;
  for (int fd : read_fds) open += ::fcntl(fd, F_GETFD) != -1 ? 1 : 0;
  EXPECT_EQ(open, PipePool::kMaxIdle);
  EXPECT_EQ(::fcntl(read_fds.back(), F_GETFD), -1);
  Result<PooledPipe> again = pool.Get(&holder);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->pipe().read_fd(), read_fds[PipePool::kMaxIdle - 1]);
  EXPECT_EQ(again->pipe().Held(), 0u);
  EXPECT_EQ(holder.load(), 1u);
}

// A pipe given back with bytes in it is never lent again: no request sees another's data.
TEST(PipePool, APipeGivenBackHoldingBytesIsClosed) {
  PipePool pool(kBytes, kBytes);
  std::atomic<uint32_t> holder{0};
  int dirty_fd = -1;
  {
    Result<PooledPipe> p = pool.Get(&holder);
    ASSERT_TRUE(p.ok());
    ASSERT_EQ(::write(p->pipe().write_fd(), "secret", 6), 6);
    dirty_fd = p->pipe().read_fd();
  }
  EXPECT_EQ(::fcntl(dirty_fd, F_GETFD), -1);
  Result<PooledPipe> next = pool.Get(&holder);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->pipe().Held(), 0u);
}

TEST(PipePool, LendsAtMostKMaxOutAtOnceAndKMaxPerHolderToOne) {
  PipePool pool(kBytes, kBytes);
  constexpr size_t kHolders = PipePool::kMaxOut / PipePool::kMaxPerHolder;
  std::atomic<uint32_t> holders[kHolders + 1] = {};
  std::vector<PooledPipe> lent;
  for (size_t h = 0; h < kHolders; ++h) {
    for (uint32_t i = 0; i < PipePool::kMaxPerHolder; ++i) {
      Result<PooledPipe> p = pool.Get(&holders[h]);
      ASSERT_TRUE(p.ok()) << h << "/" << i << ": " << p.status().ToString();
      lent.push_back(std::move(*p));
    }
    // This holder has its share; the next one still gets pipes.
    Result<PooledPipe> over = pool.Get(&holders[h]);
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.status().code(), EAGAIN);
  }
  Result<PooledPipe> over = pool.Get(&holders[kHolders]);  // the pool is empty
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), EAGAIN);
  lent.pop_back();  // the last holder's
  EXPECT_EQ(holders[kHolders - 1].load(), PipePool::kMaxPerHolder - 1);
  EXPECT_TRUE(pool.Get(&holders[kHolders]).ok());
  EXPECT_EQ(holders[kHolders].load(), 0u);  // (given back at once)
}

TEST(PipePool, MovePipedTakesExactlyWhatWasAnnounced) {
  PipePool pool(kBytes, kBytes);
  std::atomic<uint32_t> holder{0};
  Result<Pipe> from = Pipe::Make(kBytes);
  ASSERT_TRUE(from.ok());
  const std::string first(70'000, 'a'), second(5'000, 'b');
  ASSERT_EQ(::write(from->write_fd(), first.data(), first.size()), 70'000);
  ASSERT_EQ(::write(from->write_fd(), second.data(), second.size()), 5'000);
  Result<PooledPipe> p = MovePiped(pool, &holder, from->read_fd(), first.size());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->pipe().Held(), first.size());
  EXPECT_EQ(from->Held(), second.size());  // the next request's bytes stay where they were
  std::string got(first.size(), '\0');
  ASSERT_TRUE(ReadFromPipe(p->pipe().read_fd(), got.data(), got.size()).ok());
  EXPECT_EQ(got, first);
  // Announcing more than is there: refused at once, never waited for.
  Result<PooledPipe> short_one = MovePiped(pool, &holder, from->read_fd(), 6'000);
  ASSERT_FALSE(short_one.ok());
  EXPECT_EQ(short_one.status().code(), EPROTO);
}

}  // namespace
}  // namespace iorelay::daemon
