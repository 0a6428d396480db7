// The job map's format and the arithmetic of its daemon set.
#include "client/job_map.h"

#include <gtest/gtest.h>

namespace iorelay::client {
namespace {

TEST(JobMap, ParsesEpochAndActiveDaemons) {
  Result<JobMap> m = ParseJobMap(R"({"epoch": 7, "active": [0, 2]})", 3);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->epoch, 7u);
  EXPECT_EQ(m->active, 0b101u);
  EXPECT_EQ(m->locks, -1);
  m = ParseJobMap(R"({"epoch": 8, "active": [0, 2], "locks": 2})", 3);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->locks, 2);
}

TEST(JobMap, RefusesWhatNamesNoUsableDaemon) {
  for (const char* bad : {R"({"epoch": 1, "active": []})", R"({"epoch": 1, "active": [3]})",
                          R"({"epoch": 0, "active": [0]})", R"({"epoch": -1, "active": [0]})",
                          R"({"active": [0]})", R"({"epoch": 1, "active": [-1]})",
                          R"({"epoch": 1, "active": [0], "locks": 1})", "[1]", "{"}) {
    EXPECT_FALSE(ParseJobMap(bad, 3).ok()) << bad;
  }
  EXPECT_FALSE(ParseJobMap(R"({"epoch": 1, "active": [0]})", 65).ok());
}

TEST(JobMap, NthDaemonOfTheSetInIndexOrder) {
  const uint64_t mask = 0b10110;  // daemons 1, 2, 4
  EXPECT_EQ(MaskCount(mask), 3);
  EXPECT_EQ(MaskNth(mask, 0), 1);
  EXPECT_EQ(MaskNth(mask, 1), 2);
  EXPECT_EQ(MaskNth(mask, 2), 4);
  EXPECT_EQ(MaskNth(mask, 3), -1);
  EXPECT_EQ(MaskNth(uint64_t{1} << 63, 0), 63);
}

}  // namespace
}  // namespace iorelay::client
