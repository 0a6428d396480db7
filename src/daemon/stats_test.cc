// The daemon's counters: an existence check answered ENOENT or EEXIST is not an error; per-file
// counters are bounded; the connection counters' table, their JSON and their docs agree.
#include "daemon/stats.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <set>
#include <string>

#include "testutil/docs_section_testutil.h"

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

// docs/daemon.md's table, as conn_counters.h's rows make it.
std::string ConnCountersMarkdown() {
  std::string table = "| key in `iorelay stats` | counts |\n|---|---|\n";
  auto row = [&](const std::string& key, const std::string& meaning) {
    table += "| `" + key + "` | " + meaning + " |\n";
  };
#define IORELAY_CONN_COUNTER_ROW(member, key, meaning) row(key, meaning);
  IORELAY_CONN_COUNTERS(IORELAY_CONN_COUNTER_ROW)
#undef IORELAY_CONN_COUNTER_ROW
#define IORELAY_CONN_GAUGE_ROW(member, key, meaning) \
  row(key, std::string(meaning) + ", now");          \
  row(key "_peak", std::string(meaning) + ", the most since the start");
  IORELAY_CONN_GAUGES(IORELAY_CONN_GAUGE_ROW)
#undef IORELAY_CONN_GAUGE_ROW
  return table;
}

TEST(ConnCountersTest, DocsTableIsTheTable) {
  const std::string docs =
      testutil::DocsSection(IORELAY_SOURCE_DIR "/docs/daemon.md", "connection-counters");
  EXPECT_EQ(docs, ConnCountersMarkdown())
      << "docs/daemon.md's table between the connection-counters markers should read:\n"
      << ConnCountersMarkdown();
}

TEST(ConnCountersTest, EveryRowIsInTheJsonWithItsValue) {
  Stats stats({"app0"});
  uint64_t value = 1;
#define IORELAY_CONN_COUNTER_SET(member, key, meaning) stats.conn.member = value++;
  IORELAY_CONN_COUNTERS(IORELAY_CONN_COUNTER_SET)
#undef IORELAY_CONN_COUNTER_SET
  stats.conn.receiving_bytes.Add(9000);
  stats.conn.receiving_bytes.Sub(1000);
  const nlohmann::json j = stats.ToJson();
  std::set<std::string> keys;
  value = 1;
#define IORELAY_CONN_COUNTER_CHECK(member, key, meaning) \
  EXPECT_EQ(j.value(key, uint64_t{0}), value++) << key;  \
  keys.insert(key);
  IORELAY_CONN_COUNTERS(IORELAY_CONN_COUNTER_CHECK)
#undef IORELAY_CONN_COUNTER_CHECK
  EXPECT_EQ(j.value("connections_receiving_bytes", uint64_t{0}), 8000u);
  EXPECT_EQ(j.value("connections_receiving_bytes_peak", uint64_t{0}), 9000u);
  EXPECT_EQ(keys.size(), 24u);  // every key its own
  // The keys `iorelay stats` readers know, spelled as they always were.
  for (const char* known : {"connections_accepted", "connections_closed_slow_reader",
                            "connections_shm_attached", "fenced_writes"}) {
    EXPECT_TRUE(j.contains(known)) << known;
  }
}

}  // namespace
}  // namespace iorelay::daemon
