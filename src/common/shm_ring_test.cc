// The ring's lending (ShmRingReader::Borrow/Return): bytes lent stay the reader's until given
// back, in any order, and the writer gets their room only then; and the futex doorbell.
#include "common/shm_ring.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <new>
#include <numeric>
#include <thread>
#include <vector>

namespace iorelay {
namespace {

constexpr uint64_t kRing = 64 * 1024;

// A ring in an anonymous memfd, its data mapped twice in a row as the daemon maps it.
class MirroredRing : public ::testing::Test {
 protected:
  void SetUp() override {
    fd_ = ::memfd_create("shm-ring-test", MFD_CLOEXEC);
    ASSERT_GE(fd_, 0);
    ASSERT_EQ(::ftruncate(fd_, kRing), 0);
    void* base = ::mmap(nullptr, 2 * kRing, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(base, MAP_FAILED);
    data_ = static_cast<uint8_t*>(base);
    for (uint64_t at : {uint64_t{0}, kRing}) {
      ASSERT_NE(::mmap(data_ + at, kRing, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd_, 0),
                MAP_FAILED);
    }
    writer_ = ShmRingWriter(&ctl_, data_, kRing);
    reader_ = ShmRingReader(&ctl_, data_, kRing);
    reader_.EnableLending();
  }
  void TearDown() override {
    ::munmap(data_, 2 * kRing);
    ::close(fd_);
  }
  size_t Write(const std::vector<uint8_t>& bytes) {
    struct iovec v = {const_cast<uint8_t*>(bytes.data()), bytes.size()};
    Result<size_t> n = writer_.Write(&v, 1);
    EXPECT_TRUE(n.ok());
    return n.ok() ? *n : 0;
  }
  uint64_t Lend(size_t n) {
    Result<std::optional<uint64_t>> at = reader_.Borrow(n);
    EXPECT_TRUE(at.ok() && at->has_value());
    return at.ok() && at->has_value() ? **at : 0;
  }

  int fd_ = -1;
  uint8_t* data_ = nullptr;
  ShmRingControl ctl_{};
  ShmRingWriter writer_;
  ShmRingReader reader_;
};

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  std::iota(v.begin(), v.end(), seed);
  return v;
}

TEST_F(MirroredRing, LentBytesAreContiguousAcrossTheEndAndKeptUntilGivenBack) {
  // Move the positions near the end, so the next run wraps.
  ASSERT_EQ(Write(Bytes(kRing - 1000, 0)), kRing - 1000);
  std::vector<uint8_t> sink(kRing);
  ASSERT_EQ(*reader_.Read(sink.data(), kRing - 1000, false), kRing - 1000);

  const std::vector<uint8_t> a = Bytes(18000, 1), b = Bytes(14000, 2);  // half the ring
  ASSERT_EQ(Write(a), a.size());
  ASSERT_EQ(Write(b), b.size());
  const uint64_t at_a = Lend(a.size());
  const uint64_t at_b = Lend(b.size());
  EXPECT_EQ(std::memcmp(reader_.At(at_a), a.data(), a.size()), 0);  // wrapped, still whole
  EXPECT_EQ(std::memcmp(reader_.At(at_b), b.data(), b.size()), 0);
  // Nothing more is there, so nothing more is lent.
  Result<std::optional<uint64_t>> none = reader_.Borrow(1);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  // The writer has only the room that was never lent, and cannot overwrite a or b.
  const size_t free_room = kRing - a.size() - b.size();
  EXPECT_EQ(Write(Bytes(kRing, 9)), free_room);
  EXPECT_EQ(std::memcmp(reader_.At(at_a), a.data(), a.size()), 0);
  EXPECT_EQ(std::memcmp(reader_.At(at_b), b.data(), b.size()), 0);

  // b given back first: its room stays behind a, which is still lent.
  ASSERT_TRUE(writer_.PrepareToWait().ok());  // the writer waits for room
  EXPECT_FALSE(reader_.Return(at_b));
  EXPECT_EQ(Write(Bytes(1, 0)), 0u);
  EXPECT_EQ(std::memcmp(reader_.At(at_a), a.data(), a.size()), 0);
  // a given back: both runs' room is the writer's, and the waiting writer is to be rung.
  EXPECT_TRUE(reader_.Return(at_a));
  EXPECT_EQ(Write(Bytes(kRing, 3)), a.size() + b.size());
}

TEST_F(MirroredRing, LendsAtMostHalfTheRing) {
  ASSERT_EQ(Write(Bytes(kRing, 0)), kRing);
  Result<std::optional<uint64_t>> whole = reader_.Borrow(kRing / 2 + 1);
  ASSERT_TRUE(whole.ok());
  EXPECT_FALSE(whole->has_value());  // more than half at once
  const uint64_t at = Lend(kRing / 4);
  std::vector<uint8_t> sink(100);
  ASSERT_EQ(*reader_.Read(sink.data(), sink.size(), false), sink.size());  // held too
  Result<std::optional<uint64_t>> more = reader_.Borrow(kRing / 4);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(more->has_value());              // 1/4 + 100 + 1/4 > 1/2
  const uint64_t next = Lend(kRing / 4 - 100);  // exactly half held
  EXPECT_FALSE(reader_.Return(at));
  EXPECT_FALSE(reader_.Return(next));
  EXPECT_EQ(*reader_.Borrow(kRing / 2 - 100), std::optional<uint64_t>(kRing / 2));
}

TEST_F(MirroredRing, BytesReadAfterALentRunGiveTheirRoomBackOnlyWithIt) {
  const std::vector<uint8_t> a = Bytes(1000, 1), b = Bytes(500, 2);
  ASSERT_EQ(Write(a), a.size());
  ASSERT_EQ(Write(b), b.size());
  const uint64_t at_a = Lend(a.size());
  std::vector<uint8_t> got(b.size());
  ASSERT_EQ(*reader_.Read(got.data(), got.size(), false), b.size());
  EXPECT_EQ(got, b);
  // The room is the ring's free run after the oldest byte still lent: neither a's nor b's.
  EXPECT_EQ(Write(Bytes(kRing, 0)), kRing - a.size() - b.size());
  EXPECT_FALSE(reader_.Return(at_a));  // (the writer is not waiting)
  EXPECT_EQ(Write(Bytes(kRing, 0)), a.size() + b.size());
}

// The daemon's doorbell to a client: a sleeper on its flag wakes when the flag is cleared and
// woken, not before; a sleep on a flag already cleared returns at once; a wake with nobody
// asleep returns.
TEST(FlagDoorbell, SleepsUntilClearedAndWokenOrTheTimeEnds) {
  std::atomic<uint32_t> flag{1};
  WakeFlag(&flag);  // nobody asleep
  const auto t0 = std::chrono::steady_clock::now();
  SleepOnFlag(&flag, 30);  // nobody wakes it: the time ends it
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(25));
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    while (flag.load() == 1) SleepOnFlag(&flag, 10000);
    woke.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(woke.load());
  flag.store(0);
  WakeFlag(&flag);
  sleeper.join();
  EXPECT_TRUE(woke.load());
  const auto t1 = std::chrono::steady_clock::now();
  SleepOnFlag(&flag, 10000);  // cleared: no sleep
  EXPECT_LT(std::chrono::steady_clock::now() - t1, std::chrono::seconds(5));
}

// The flag is a process-shared futex: a sleeper on one mapping of the file is woken through
// another mapping of it (as the client's and the daemon's are), and a wake-up wakes one sleeper,
// so a client that parks many threads on its flag cannot make the daemon's wake-ups cost more.
TEST(FlagDoorbell, AWakeReachesOneSleeperThroughAnotherMapping) {
  const int fd = ::memfd_create("flag", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 4096), 0);
  void* a = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  void* b = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(a, MAP_FAILED);
  ASSERT_NE(b, MAP_FAILED);
  ASSERT_NE(a, b);
  auto* sleeping_on = new (a) std::atomic<uint32_t>(1);
  auto* woken_through = static_cast<std::atomic<uint32_t>*>(b);
  std::atomic<int> woke{0};
  std::vector<std::thread> sleepers;
  for (int i = 0; i < 2; ++i) {
    sleepers.emplace_back([&] {
      SleepOnFlag(sleeping_on, 3000);  // the flag stays 1: only a wake-up or the time ends it
      woke.fetch_add(1);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // both asleep (a loaded machine)
  const auto t0 = std::chrono::steady_clock::now();
  WakeFlag(woken_through);
  while (woke.load() == 0 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(woke.load(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(woke.load(), 1);  // the other sleeps on
  WakeFlag(woken_through);
  for (auto& t : sleepers) t.join();
  EXPECT_EQ(woke.load(), 2);
  ::munmap(a, 4096);
  ::munmap(b, 4096);
  ::close(fd);
}

}  // namespace
}  // namespace iorelay
