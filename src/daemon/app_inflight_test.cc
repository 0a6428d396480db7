// The application-wide in-flight bytes: parked connections are woken once, when the bytes fall
// to the limit, from the thread that made them fall; not before, and not after they left.
#include "daemon/app_inflight.h"

#include <gtest/gtest.h>

#include <thread>

namespace iorelay::daemon {
namespace {

TEST(AppInflightTest, ParkedConnectionsWakeWhenTheBytesFallToTheLimit) {
  AppInflight app;
  app.Add(300);
  int a = 0, b = 0;
  app.Park(&a, 100, [&a] { ++a; });
  app.Park(&b, 100, [&b] { ++b; });
  EXPECT_EQ(app.parked(), 2u);
  app.Sub(150);  // 150: still over
  EXPECT_EQ(a + b, 0);
  app.Sub(50);  // 100: at the limit
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(app.parked(), 0u);
  app.Sub(100);  // woken once only
  EXPECT_EQ(a + b, 2);
  EXPECT_EQ(app.bytes(), 0u);
}

TEST(AppInflightTest, AnUnparkedConnectionIsNotWoken) {
  AppInflight app;
  app.Add(10);
  int woken = 0;
  app.Park(&woken, 5, [&woken] { ++woken; });
  app.Park(&woken, 5, [&woken] { ++woken; });  // parked again: still one entry
  EXPECT_EQ(app.parked(), 1u);
  app.Unpark(&woken);
  app.Sub(10);
  EXPECT_EQ(woken, 0);
  app.Unpark(&woken);  // not parked: nothing happens
}

// A fall racing with a park: either the falling thread wakes the parked one, or the parker's
// look at the bytes after parking sees the fall. Never neither.
TEST(AppInflightTest, AFallRacingAParkIsNeverLost) {
  for (int round = 0; round < 2000; ++round) {
    AppInflight app;
    app.Add(2);
    std::atomic<int> woken{0};
    std::thread faller([&app] { app.Sub(1); });
    app.Park(&app, 1, [&woken] { woken.fetch_add(1); });
    const bool sees_fall = app.bytes() <= 1;
    faller.join();
    EXPECT_TRUE(sees_fall || woken.load() == 1) << "round " << round;
  }
}

}  // namespace
}  // namespace iorelay::daemon
