// Trace replay: a small handwritten trace is replayed closed-loop (each session's next request
// only after its previous one was answered, in recorded arrival order), every request is
// answered with its bytes, FIFO makes exactly the trace's one-request dispatches, and a trace of
// another version or with a bad header is refused naming the file. Runs fork (one SimGrid engine
// per process).
#include "sim/trace_replay.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>

#include "sim/platform.h"
#include "sim/sim_options.h"
#include "testutil/forked_json_testutil.h"

namespace iorelay::sim {
namespace {

using nlohmann::json;

constexpr const char* kHeader =
    "arrival_ns\tcompletion_ns\tsession\tapp\tdev\tino\top\thandle\toffset\tsize\tflags\t"
    "dispatch\tqueue_ns\tresult\n";

struct Row {
  int64_t arrival_ns;
  uint64_t session;
  uint64_t ino;
  std::string op;
  uint64_t offset;
  uint64_t size;
  uint64_t dispatch;
};

std::string TraceText(const std::vector<Row>& rows) {
  std::string text = std::string("# iorelay-trace 2\n") + kHeader;
  for (const Row& r : rows) {
    text += fmt::format("{}\t{}\t{}\tapp\t2049\t{}\t{}\t{}\t{}\t{}\t-\t{}\t100\t{}\n", r.arrival_ns,
                        r.arrival_ns + 1000, r.session, r.ino, r.op, r.ino == 0 ? 0 : 3, r.offset,
                        r.size, r.dispatch, r.size);
  }
  return text;
}

// Three sessions, 12 requests each, one dispatch per request (a daemon running FIFO): session
// 1 writes file 11 contiguously, session 2 writes file 12 at scattered offsets, session 3 reads
// file 11 with read() (at the recorded offset). The rows are in completion order, not arrival
// order, as the daemon writes them; opens and closes are in it too.
std::vector<Row> HandwrittenRows() {
  std::vector<Row> rows;
  uint64_t dispatch = 0;
  rows.push_back({5, 1, 11, "open", 0, 0, 0});
  for (uint64_t i = 0; i < 12; ++i) {
    const int64_t t = 1000 + static_cast<int64_t>(i) * 3000;
    rows.push_back({t, 1, 11, "pwrite", i * 65536, 65536, ++dispatch});
    rows.push_back({t + 1000, 2, 12, "pwrite", ((i * 7) % 12) * 1048576, 32768, ++dispatch});
    rows.push_back({t + 2000, 3, 11, "read", i * 4096, 4096, ++dispatch});
  }
  rows.push_back({60000, 1, 11, "close", 0, 0, 0});
  // Completion order: reverse each group of three.
  for (size_t i = 1; i + 2 < rows.size(); i += 3) std::swap(rows[i], rows[i + 2]);
  return rows;
}

RunConfig Config(const std::string& scheduler) {
  RunConfig c;
  auto p = ParsePlatform({{"name", "replay-test"},
                          {"network", {{"latency", "2us"}}},
                          {"compute", {{"nic", "10Gbps"}}},
                          {"ionode", {{"nic", "10Gbps"}, {"slots", 4}}},
                          {"storage", {{"kind", "nfs"}, {"nic", "10Gbps"}, {"device", "hdd"}}}});
  EXPECT_TRUE(p.ok()) << p.status().message();
  c.platform = *p;
  c.scheduler = scheduler;
  c.context_factory = "thread";  // AddressSanitizer cannot follow raw contexts
  return c;
}

// Replays in a child process; ReplayJson with the dispatch list, or {"error": message}.
json ReplayForked(const RunConfig& config, const ReplayTrace& trace) {
  return testutil::ForkedJson([&] {
    auto r = RunReplay(config, trace);
    return r.ok() ? ReplayJson(config, trace, *r, true).dump()
                  : json{{"error", r.status().message()}}.dump();
  });
}

ReplayTrace Parse(const std::string& text) {
  std::istringstream in(text);
  auto t = ParseReplayTrace(in, "test.trace");
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : ReplayTrace{};
}

TEST(TraceReplayTest, ReadsDataRequestsInArrivalOrderPerSession) {
  const ReplayTrace t = Parse(TraceText(HandwrittenRows()));
  EXPECT_EQ(t.rows, 38u);
  ASSERT_EQ(t.sessions.size(), 3u);
  EXPECT_EQ(t.requests(), 36u);
  EXPECT_EQ(t.files, 2u);
  for (const auto& s : t.sessions) {
    ASSERT_EQ(s.size(), 12u);
    for (size_t i = 1; i < s.size(); ++i) EXPECT_LT(s[i - 1].arrival_ns, s[i].arrival_ns);
  }
  // Session order is first appearance in the file: session 3 completed first.
  EXPECT_EQ(t.session_ids[0], 3u);
  EXPECT_FALSE(t.sessions[0][0].positional);  // read() at the recorded offset
  EXPECT_FALSE(t.sessions[0][0].write);
  EXPECT_EQ(t.sessions[0][5].offset, 5u * 4096);
  EXPECT_EQ(TraceDispatches(t).size(), 36u);
}

// Each session's requests are dispatched in its arrival order, never two of one session
// together or overlapping (closed loop), every request is answered with all its bytes, and FIFO
// reproduces each of the trace's dispatches.
TEST(TraceReplayTest, FifoReplaysClosedLoopAndMatchesEveryDispatch) {
  const ReplayTrace t = Parse(TraceText(HandwrittenRows()));
  uint64_t bytes = 0;
  for (const auto& s : t.sessions) {
    for (const auto& r : s) bytes += r.length;
  }
  for (const char* scheduler : {"fifo", "aioli"}) {
    SCOPED_TRACE(scheduler);
    const json out = ReplayForked(Config(scheduler), t);
    ASSERT_FALSE(out.contains("error")) << out.dump();
    EXPECT_EQ(out["requests"], 36);
    EXPECT_EQ(out["errors"], 0);
    EXPECT_EQ(out["bytes"], bytes);
    EXPECT_EQ(out["bytes_at_storage"], bytes);
    EXPECT_EQ(out["trace_dispatches"], 36);
    std::map<uint64_t, int64_t> last;  // session → last index dispatched
    for (const json& d : out["dispatch_list"]) {
      std::map<uint64_t, int> in_this;
      for (const json& m : d) {
        const auto session = m[0].get<uint64_t>();
        const auto index = m[1].get<int64_t>();
        EXPECT_EQ(++in_this[session], 1) << "two requests of one session in one dispatch";
        EXPECT_EQ(index, last.count(session) != 0 ? last[session] + 1 : 0) << session;
        last[session] = index;
      }
    }
    EXPECT_EQ(last.size(), 3u);
    for (const auto& [session, index] : last) EXPECT_EQ(index, 11) << session;
  }
  const json fifo = ReplayForked(Config("fifo"), t);
  EXPECT_EQ(fifo["dispatches"], 36);
  EXPECT_EQ(fifo["identical_dispatch_share"], 1.0);
  EXPECT_EQ(fifo["identical_dispatches"], 36);
  EXPECT_EQ(fifo["trace_requests"], 36);
  EXPECT_DOUBLE_EQ(fifo["trace_time_s"].get<double>(), 36000e-9);  // 1000 ns to 37000 ns
  // Deterministic: the same replay gives the same dispatches.
  EXPECT_EQ(ReplayForked(Config("fifo"), t)["dispatch_digest"], fifo["dispatch_digest"]);
}

// A session alone writing contiguously: an open loop would let aIOLi merge its requests; the
// closed loop never has two of them queued, so each is its own dispatch.
TEST(TraceReplayTest, OneSessionIsNeverMergedWithItself) {
  std::vector<Row> rows;
  for (uint64_t i = 0; i < 16; ++i) {
    rows.push_back({static_cast<int64_t>(i) * 10, 7, 11, "pwrite", i * 8192, 8192, i + 1});
  }
  const json out = ReplayForked(Config("aioli"), Parse(TraceText(rows)));
  ASSERT_FALSE(out.contains("error")) << out.dump();
  EXPECT_EQ(out["dispatches"], 16);
  EXPECT_EQ(out["identical_dispatch_share"], 1.0);
  // 16 accesses of 8 KiB on the hdd model, one after the other: at least the first seek.
  EXPECT_GT(out["simulated_time_s"].get<double>(), 0.008);
}

// Two daemons' traces (the same session number in both): each daemon's sessions go through its
// own I/O node, so no dispatch mixes them even under a scheduler that merges; a file is one file
// by (dev, ino) across both; the daemons' dispatch numbers stay apart (FIFO makes all 36).
TEST(TraceReplayTest, SeveralDaemonsTracesReplayThroughOneIoNodeEach) {
  std::vector<Row> first, second;
  for (uint64_t i = 0; i < 12; ++i) {
    const auto t = static_cast<int64_t>(i) * 2000;
    first.push_back({t, 1, 11, "pwrite", i * 65536, 65536, i + 1});
    first.push_back({t + 500, 2, 11, "pwrite", (12 + i) * 65536, 65536, 0});  // (queued alone)
    second.push_back({t + 1000, 1, 11, "pwrite", (24 + i) * 65536, 65536, i + 1});
  }
  for (Row& r : first) {
    if (r.dispatch == 0) r.dispatch = 100 + r.offset / 65536;
  }
  std::vector<ReplayTrace> traces = {Parse(TraceText(first)), Parse(TraceText(second))};
  traces[1].path = "second.trace";
  const ReplayTrace t = MergeReplayTraces(std::move(traces));
  EXPECT_EQ(t.ionodes, 2u);
  EXPECT_EQ(t.path, "test.trace,second.trace");
  EXPECT_EQ(t.files, 1u);
  EXPECT_EQ(t.apps, 1u);
  EXPECT_EQ(t.session_ids, (std::vector<uint64_t>{1, 2, 1}));
  EXPECT_EQ(t.ionode_of_session, (std::vector<uint32_t>{0, 0, 1}));
  EXPECT_EQ(TraceDispatches(t).size(), 36u);
  const json fifo = ReplayForked(Config("fifo"), t);
  ASSERT_FALSE(fifo.contains("error")) << fifo.dump();
  EXPECT_EQ(fifo["ionodes"], 2);
  EXPECT_EQ(fifo["requests"], 36);
  EXPECT_EQ(fifo["bytes_at_storage"], 36 * 65536);
  EXPECT_EQ(fifo["identical_dispatch_share"], 1.0);
  const json aioli = ReplayForked(Config("aioli"), t);
  ASSERT_FALSE(aioli.contains("error")) << aioli.dump();
  EXPECT_EQ(aioli["requests"], 36);
  for (const json& d : aioli["dispatch_list"]) {
    ASSERT_EQ(d[0].size(), 3u);  // [trace, session, index]
    for (const json& m : d) EXPECT_EQ(m[0], d[0][0]) << "a dispatch mixes two I/O nodes";
  }
}

// Two daemons' traces writing the same bytes of one file under byte-range tokens: each write
// waits for the other I/O node's write over its bytes and takes the range back, and every
// request is still answered.
TEST(TraceReplayTest, OverlappingWritesFromTwoIoNodesTakeTurnsUnderRangeTokens) {
  std::vector<Row> first, second;
  for (uint64_t i = 0; i < 12; ++i) {
    const auto t = static_cast<int64_t>(i) * 2000;
    first.push_back({t, 1, 11, "pwrite", i * 65536, 65536, i + 1});
    second.push_back({t, 1, 11, "pwrite", i * 65536, 65536, i + 1});
  }
  std::vector<ReplayTrace> traces = {Parse(TraceText(first)), Parse(TraceText(second))};
  traces[1].path = "second.trace";
  const ReplayTrace t = MergeReplayTraces(std::move(traces));
  RunConfig free = Config("fifo");
  RunConfig tokens = free;
  tokens.platform.storage.range_token_ns = 1'000'000;
  const json a = ReplayForked(free, t);
  const json b = ReplayForked(tokens, t);
  ASSERT_FALSE(b.contains("error")) << b.dump();
  EXPECT_EQ(b["requests"], 24);
  EXPECT_EQ(b["bytes_at_storage"], 24 * 65536);
  // At least one grant per write after the first (the writes change hands each time).
  EXPECT_GT(b["simulated_time_s"].get<double>(), a["simulated_time_s"].get<double>() + 0.011);
}

TEST(TraceReplayTest, CountsIdenticalDispatchesBySet) {
  const std::vector<DispatchSet> theirs = {{{0, 0}, {1, 0}}, {{0, 1}}, {{1, 1}}};
  const std::vector<DispatchSet> ours = {{{1, 0}, {0, 0}}, {{0, 1}, {1, 1}}};
  EXPECT_EQ(CountIdentical(theirs, ours), 1u);
}

TEST(TraceReplayTest, OtherVersionsAndBadHeadersAreRefusedNamingTheFile) {
  std::istringstream old("# iorelay-trace 1\n");
  auto a = ParseReplayTrace(old, "old.trace");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(),
            "old.trace: starts with '# iorelay-trace 1', expected '# iorelay-trace 2'");
  std::istringstream header("# iorelay-trace 2\ntime_ns\tapp\n");
  auto b = ParseReplayTrace(header, "h.trace");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(), "h.trace: line 2 is not the version 2 header");
  std::istringstream columns(std::string("# iorelay-trace 2\n") + kHeader + "1\t2\t3\n");
  auto c = ParseReplayTrace(columns, "c.trace");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "c.trace:3: 3 columns, expected 14");
  for (const Status& s : {a.status(), b.status(), c.status()}) {
    EXPECT_EQ(s.message().find('\n'), std::string::npos);
    EXPECT_EQ(s.code(), EINVAL);  // iorelay-sim exits 2
  }
}

TEST(TraceReplayTest, TheToolRefusesABadTraceBeforeSimulating) {
  char path[] = "/tmp/iorelay-replay-test-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string text = "# iorelay-trace 3\n";
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  auto parsed =
      ParseSimOptions({"--platform", std::string(PLATFORMS_DIR) + "/local.json", "--replay", path});
  std::remove(path);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), EINVAL);
  EXPECT_NE(parsed.status().message().find(path), std::string::npos) << parsed.status().message();
  auto missing = ParseSimOptions({"--platform", std::string(PLATFORMS_DIR) + "/local.json",
                                  "--replay", "/nonexistent/x.trace"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/x.trace"), std::string::npos);
  auto empty = ParseSimOptions({"--platform", std::string(PLATFORMS_DIR) + "/local.json",
                                "--replay", "/nonexistent/x.trace,"});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty trace name"), std::string::npos)
      << empty.status().message();
}

}  // namespace
}  // namespace iorelay::sim
