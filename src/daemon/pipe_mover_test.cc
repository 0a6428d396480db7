// PipeMover on real pipes: moves complete through the ring and their callbacks run in Reap,
// once its descriptor says so; a read of bytes that never come ends instead of waiting.
#include "daemon/pipe_mover.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "daemon/pipe_pool.h"

namespace iorelay::daemon {
namespace {

// Reaps until `done`, or false after 5 s.
bool ReapUntil(PipeMover& m, const bool& done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done && std::chrono::steady_clock::now() < end) {
    struct pollfd p = {m.event_fd(), POLLIN, 0};
    ::poll(&p, 1, 100);
    m.Reap();
  }
  return done;
}

class PipeMoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<PipeMover>> m = PipeMover::Create();
    if (!m.ok()) GTEST_SKIP() << "no io_uring here: " << m.status().ToString();
    mover_ = std::move(*m);
    Result<Pipe> a = Pipe::Make(64 * 1024);
    Result<Pipe> b = Pipe::Make(64 * 1024);
    ASSERT_TRUE(a.ok() && b.ok());
    a_ = std::move(*a);
    b_ = std::move(*b);
  }
  std::unique_ptr<PipeMover> mover_;
  Pipe a_, b_;
};

TEST_F(PipeMoverTest, SpliceReadAndDiscardCompleteInReap) {
  ASSERT_EQ(::write(a_.write_fd(), "0123456789", 10), 10);
  bool done = false;
  Result<size_t> got = Status::FromErrno(EINVAL, "not run");
  mover_->Splice(a_.read_fd(), b_.write_fd(), 4, [&](Result<size_t> r) {
    got = r;
    done = true;
  });
  ASSERT_TRUE(ReapUntil(*mover_, done));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 4u);
  char buf[16] = {};
  ASSERT_EQ(::read(b_.read_fd(), buf, sizeof buf), 4);
  EXPECT_EQ(std::string(buf, 4), "0123");

  done = false;
  mover_->Discard(a_.read_fd(), 2, [&](Result<size_t> r) {
    got = r;
    done = true;
  });
  ASSERT_TRUE(ReapUntil(*mover_, done));
  EXPECT_EQ(*got, 2u);

  done = false;
  mover_->Read(a_.read_fd(), buf, 4, [&](Result<size_t> r) {
    got = r;
    done = true;
  });
  ASSERT_TRUE(ReapUntil(*mover_, done));
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(*got, 4u);
  EXPECT_EQ(std::string(buf, 4), "6789");  // "45" was dropped
  EXPECT_EQ(mover_->in_progress(), 0u);
}

TEST_F(PipeMoverTest, MovesFromAnEmptyPipeEndInsteadOfWaiting) {
  bool done = false;
  Result<size_t> got = size_t{0};
  mover_->Splice(a_.read_fd(), b_.write_fd(), 4, [&](Result<size_t> r) {
    got = r;
    done = true;
  });
  ASSERT_TRUE(ReapUntil(*mover_, done));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), EAGAIN);

  char buf[4];
  done = false;
  const auto start = std::chrono::steady_clock::now();
  mover_->Read(a_.read_fd(), buf, sizeof buf, [&](Result<size_t> r) {
    got = r;
    done = true;
  });
  ASSERT_TRUE(ReapUntil(*mover_, done));  // io_uring would wait for bytes: the read's time limit
  EXPECT_FALSE(got.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_EQ(mover_->in_progress(), 0u);
}

TEST_F(PipeMoverTest, SpliceWithinWaitsForItsMove) {
  ASSERT_EQ(::write(a_.write_fd(), "abc", 3), 3);
  auto keep = std::make_shared<int>(1);
  Result<size_t> r =
      mover_->SpliceWithin(a_.read_fd(), b_.write_fd(), 3, std::chrono::seconds(5), keep);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 3u);
  EXPECT_EQ(keep.use_count(), 1);  // the callback, and what it kept, are gone
}

}  // namespace
}  // namespace iorelay::daemon
