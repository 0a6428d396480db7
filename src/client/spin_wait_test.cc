// SpinWait: a reply found while spinning ends the spin; misses in a row make the next waits
// sleep at once, 2^k - 1 of them, up to one spin in 64.
#include "client/spin_wait.h"

#include <gtest/gtest.h>

#include <vector>

namespace iorelay::client {
namespace {

TEST(SpinWait, OffNeverLooks) {
  SpinWait s;
  int looks = 0;
  EXPECT_FALSE(s.Spin([&] { return ++looks > 0; }));
  EXPECT_EQ(looks, 0);
}

TEST(SpinWait, EndsAtTheLookThatFindsTheReply) {
  SpinWait s;
  s.set_us(1'000'000);  // (the reply comes long before the spin is over)
  int looks = 0;
  EXPECT_TRUE(s.Spin([&] { return ++looks == 300; }));
  EXPECT_EQ(looks, 300);
}

TEST(SpinWait, MissesInARowBackOffExponentiallyAndAHitResets) {
  SpinWait s;
  s.set_us(1);
  auto never = [] { return false; };
  // Which of 200 waits spin, when no reply ever comes in time: the first, then after 1, 3, 7,
  // 15, 31 and 63 skipped waits.
  std::vector<int> spun;
  for (int wait = 0; wait < 200; ++wait) {
    bool looked = false;
    s.Spin([&] {
      looked = true;
      return never();
    });
    if (looked) spun.push_back(wait);
  }
  EXPECT_EQ(spun, (std::vector<int>{0, 2, 6, 14, 30, 62, 126, 190}));
  // The wait after the next skipped ones spins, finds its reply, and the one after spins again.
  int waits = 0;
  while (!s.Spin([] { return true; })) ++waits;
  EXPECT_LE(waits, 63);
  int looks = 0;
  EXPECT_TRUE(s.Spin([&] { return ++looks > 0; }));
  EXPECT_EQ(looks, 1);
}

}  // namespace
}  // namespace iorelay::client
