// The daemon's counters: an existence check answered ENOENT or EEXIST is not an error; per-file
// counters are bounded.
#include "daemon/stats.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace iorelay::daemon {
namespace {

TEST(StatsTest, MetadataEnoentAndEexistAreAnswersNotErrors) {
  Stats stats({"app0"});
  AppStats* app = stats.app(0);
  Stats::Record(app, Family::kMetadata, ENOENT, 0, 0, 0, 10);  // stat of a missing file
  Stats::Record(app, Family::kMetadata, EEXIST, 0, 0, 0, 10);  // mkdir of an existing one
  Stats::Record(app, Family::kMetadata, EACCES, 0, 0, 0, 10);
  Stats::Record(app, Family::kMetadata, 0, 0, 0, 0, 10);
  Stats::Record(app, Family::kRead, ENOENT, 0, 0, 0, 10);  // not a lookup: an error
  nlohmann::json j = stats.ToJson();
  for (const nlohmann::json& counters : {j["total"], j["apps"]["app0"]}) {
    EXPECT_EQ(counters["requests"], 5);
    EXPECT_EQ(counters["errors"], 2);
    EXPECT_EQ(counters["existence_answers"], 2);
    EXPECT_EQ(counters["by_family"]["metadata"]["existence_answers"], 2);
    EXPECT_EQ(counters["by_family"]["metadata"]["errors"], 1);
    EXPECT_EQ(counters["by_family"]["read"]["errors"], 1);
  }
}

TEST(StatsTest, FilesBeyondTheBoundAreCountedTogether) {
  Stats stats({"app0"});
  for (uint64_t ino = 0; ino < kMaxFileCounters + 10; ++ino) {
    stats.RecordFileDispatch(1, ino, 2, 8192);
  }
  stats.RecordFileDispatch(1, 0, 1, 4096);  // a counted file goes on being counted alone
  nlohmann::json j = stats.ToJson();
  EXPECT_EQ(j["files"].size(), kMaxFileCounters);
  EXPECT_EQ(j["files"]["1:0"]["requests"], 3);
  EXPECT_EQ(j["files_other"]["requests"], 20);
  EXPECT_EQ(j["files_other"]["dispatches"], 10);
  EXPECT_EQ(j["total"]["dispatches"], kMaxFileCounters + 11);  // every dispatch, once
}

}  // namespace
}  // namespace iorelay::daemon
