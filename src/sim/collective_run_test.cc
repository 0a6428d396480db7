// Collective MPI-IO in the simulator, judged by the shapes of published results: Sung et al.'s
// collective-I/O trends on the Cori platform (throughput rises with nodes then saturates;
// spreading aggregators beats packing them; with few aggregators per node more OSTs help) and
// the parallel-I/O lecture's striping results on its Lustre machine (a dd gains 1.74x from 1 to
// 10 stripes; 8 MB files are faster on 1 stripe, 1.5 GB files >= 2x faster on 18). Each run
// forks (one SimGrid engine per process).
#include "sim/collective_run.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "testutil/forked_json_testutil.h"

namespace iorelay::sim {
namespace {

using nlohmann::json;
constexpr uint64_t kMiB = 1 << 20;

// The platform `doc` is refused, with `want` in the message.
void ExpectRefused(const json& doc, const std::string& want) {
  auto p = ParsePlatform(doc);
  ASSERT_FALSE(p.ok()) << want;
  EXPECT_NE(p.status().message().find(want), std::string::npos) << p.status().message();
}

Platform Load(const std::string& name) {
  auto p = LoadPlatform(std::string(PLATFORMS_DIR) + "/" + name + ".json");
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : Platform{};
}

// Sanitizers cannot follow SimGrid's raw context switches: OS threads under them (slower: a
// client's RPCs are an actor each).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr const char* kContexts = "thread";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr const char* kContexts = "thread";
#else
constexpr const char* kContexts = "";
#endif
#else
constexpr const char* kContexts = "";
#endif

json RunForked(const Platform& platform, CollectiveSpec spec) {
  spec.context_factory = kContexts;
  return testutil::ForkedJson([&] {
    auto r = RunCollective(platform, spec);
    return r.ok() ? CollectiveJson(platform, spec, *r).dump()
                  : json{{"error", r.status().message()}}.dump();
  });
}

double Bandwidth(const Platform& platform, const CollectiveSpec& spec) {
  const json out = RunForked(platform, spec);
  EXPECT_FALSE(out.contains("error")) << out.dump();
  EXPECT_EQ(out.value("bytes", uint64_t{0}), spec.TotalBytes());
  return out.value("bandwidth_MBps", 0.0);
}

// `nodes` x `ranks_per_node` ranks, the rest CollectiveSpec's defaults.
CollectiveSpec Ranks(uint32_t nodes, uint32_t ranks_per_node) {
  CollectiveSpec s;
  s.nodes = nodes;
  s.ranks_per_node = ranks_per_node;
  return s;
}

// Sung et al.'s collective runs: aggregators = OSTs (ROMIO on Lustre), 16 ranks per node, each
// rank 4 MiB per call, 2 calls, 1 MiB stripes.
CollectiveSpec Cori(uint32_t nodes, int32_t osts, int32_t max_per_node, bool packed = false) {
  CollectiveSpec s;
  s.nodes = nodes;
  s.ranks_per_node = 16;
  s.bytes_per_rank = 4 * kMiB;
  s.calls = 2;
  s.stripe_count = osts;
  s.cb_nodes = osts;
  s.max_per_node = max_per_node;
  s.packed = packed;
  return s;
}

TEST(CollectiveSimTest, TheExchangeMovesWhatTheLustreRulePlans) {
  // 2 nodes x 2 ranks, 1 MiB each, 2 stripes, 2 aggregators spread (ranks 0 and 2): stripe s goes
  // to aggregator s mod 2, so ranks 1 and 2 cross the network (1 MiB each), 0 and 3 stay.
  CollectiveSpec s = Ranks(2, 2);
  s.stripe_count = 2;
  s.cb_nodes = 2;
  const json out = RunForked(Load("cori"), s);
  ASSERT_FALSE(out.contains("error")) << out.dump();
  EXPECT_EQ(out["aggregators"], json::array({0, 2}));
  EXPECT_EQ(out["exchanged_bytes"], 2 * kMiB);
  EXPECT_EQ(out["bytes"], 4 * kMiB);
  EXPECT_EQ(out["storage_calls"], 4);  // 1 MiB RPCs
  EXPECT_EQ(out["cycles"], 1);
  // The read is the mirror: the same bytes cross, the other way, after the aggregators' reads.
  s.write = false;
  const json read = RunForked(Load("cori"), s);
  ASSERT_FALSE(read.contains("error")) << read.dump();
  EXPECT_EQ(read["operation"], "read");
  EXPECT_EQ(read["exchanged_bytes"], 2 * kMiB);
  EXPECT_EQ(read["bytes"], 4 * kMiB);
}

TEST(CollectiveSimTest, TheSaturationPointSetsTheCountWithoutCbNodes) {
  // 8 ranks x 1 MiB per call, k = 2 MiB: ceil(8 / 2) = 4 aggregators, spread over 4 nodes.
  CollectiveSpec s = Ranks(4, 2);
  s.max_per_node = 2;
  s.saturation_point_bytes = 2 * kMiB;
  const json out = RunForked(Load("cori"), s);
  ASSERT_FALSE(out.contains("error")) << out.dump();
  EXPECT_EQ(out["aggregators"], json::array({0, 2, 4, 6}));
  EXPECT_EQ(out["saturation_point"], "2MiB");
}

// OMPIO's plan: 3 nodes x 4 ranks, 1 MiB each per call, one group of all 12 ranks (cb_nodes 1,
// rank 0 aggregating), 4 MiB cycles: 3 cycles, each gathering the next 4 MiB in file order, as
// ROMIO's one aggregator's windows do; the same bytes cross the network (the 8 MiB of nodes 1
// and 2 per call). OMPIO's exchange for a cycle runs while the last cycle is written, so the same
// cycles take less time than ROMIO's, where exchange and writes alternate. That is vulcan's
// asynchronous writing, which its default rule takes in calls of more than 2 cycles (auto, as
// here); written synchronously (off) the cycles alternate as ROMIO's do, in the same time.
TEST(CollectiveSimTest, OmpioOverlapsACyclesExchangeWithTheLastCyclesWrites) {
  CollectiveSpec s = Ranks(3, 4);
  s.cb_nodes = 1;
  s.cb_buffer_bytes = 4 * kMiB;
  s.calls = 2;
  const json romio = RunForked(Load("testbed"), s);
  s.plan = CollectivePlan::kOmpio;
  const json ompio = RunForked(Load("testbed"), s);
  ASSERT_FALSE(romio.contains("error")) << romio.dump();
  ASSERT_FALSE(ompio.contains("error")) << ompio.dump();
  EXPECT_EQ(ompio["plan"], "ompio");
  EXPECT_EQ(ompio["segmentation"], "dynamic");
  EXPECT_EQ(ompio["aggregators"], json::array({0}));
  for (const char* key : {"cycles", "exchanged_bytes", "bytes", "storage_calls"}) {
    EXPECT_EQ(ompio[key], romio[key]) << key;
  }
  EXPECT_EQ(ompio["cycles"], 6);
  EXPECT_EQ(ompio["exchanged_bytes"], 2 * 8 * kMiB);
  const double overlapped = ompio["simulated_time_s"], alternating = romio["simulated_time_s"];
  EXPECT_LT(overlapped, 0.95 * alternating) << ompio.dump() << romio.dump();
  EXPECT_EQ(ompio["ompio_async"], "auto");
  EXPECT_EQ(ompio["overlapped_calls"], 2);
  s.ompio_async = OmpioAsync::kOn;
  EXPECT_EQ(RunForked(Load("testbed"), s)["simulated_time_s"], overlapped);
  s.ompio_async = OmpioAsync::kOff;
  const json sync = RunForked(Load("testbed"), s);
  EXPECT_EQ(sync["overlapped_calls"], 0);
  EXPECT_NEAR(sync["simulated_time_s"].get<double>(), alternating, 0.01 * alternating);
  // 8 MiB cycles: 2 per call, which auto writes synchronously and on overlaps.
  s.cb_buffer_bytes = 8 * kMiB;
  s.ompio_async = OmpioAsync::kAuto;
  const json two = RunForked(Load("testbed"), s);
  s.ompio_async = OmpioAsync::kOn;
  const json two_on = RunForked(Load("testbed"), s);
  EXPECT_EQ(two["overlapped_calls"], 0);
  EXPECT_EQ(two_on["overlapped_calls"], 2);
  EXPECT_LT(two_on["simulated_time_s"].get<double>(), two["simulated_time_s"].get<double>());
  s.cb_buffer_bytes = 4 * kMiB;
  s.ompio_async = OmpioAsync::kAuto;
  // A read does not overlap: each cycle's reads, then its exchange back, as ROMIO's.
  s.write = false;
  const json read = RunForked(Load("testbed"), s);
  ASSERT_FALSE(read.contains("error")) << read.dump();
  EXPECT_EQ(read["exchanged_bytes"], 2 * 8 * kMiB);
}

// OMPIO's groups without cb_nodes: split/merge around k. 12 ranks x 1 MiB is one file-contiguous
// group of 12 MiB; k = 4 MiB splits it into 3 groups of 4 consecutive ranks, whose first ranks
// aggregate (one per node here, so nothing crosses the network). Packing is ROMIO's, refused.
TEST(CollectiveSimTest, OmpioGroupsComeFromSplitMergeAroundK) {
  CollectiveSpec s = Ranks(3, 4);
  s.plan = CollectivePlan::kOmpio;
  s.saturation_point_bytes = 4 * kMiB;
  s.segmentation = collective::Segmentation::kStatic;
  const json out = RunForked(Load("testbed"), s);
  ASSERT_FALSE(out.contains("error")) << out.dump();
  EXPECT_EQ(out["aggregators"], json::array({0, 4, 8}));
  EXPECT_EQ(out["segmentation"], "static");
  EXPECT_EQ(out["exchanged_bytes"], 0);
  ASSERT_EQ(out["reasons"].size(), 1u);
  EXPECT_NE(out["reasons"][0].get<std::string>().find("split/merge around k = 4MiB: 3 group(s)"),
            std::string::npos)
      << out.dump();
  s.packed = true;
  EXPECT_NE(ValidateCollective(Load("testbed"), s).message().find("ROMIO's"), std::string::npos);
  s.packed = false;
  s.collective = false;
  EXPECT_NE(ValidateCollective(Load("testbed"), s).message().find("independent"),
            std::string::npos);
  // Aggregator settings mean nothing to independent I/O: said, not ignored.
  s.plan = CollectivePlan::kRomio;
  s.segmentation = collective::Segmentation::kDynamic;
  s.cb_nodes = 2;
  EXPECT_NE(ValidateCollective(Load("testbed"), s).message().find("independent I/O has none"),
            std::string::npos);
  s.cb_nodes = 0;
  s.saturation_point_bytes = 0;
  EXPECT_TRUE(ValidateCollective(Load("testbed"), s).ok());
  s.saturation_point_bytes = 4 * kMiB;
  s.segmentation = collective::Segmentation::kStatic;
  s.plan = CollectivePlan::kOmpio;
  s.collective = true;
  s.plan = CollectivePlan::kRomio;
  EXPECT_NE(ValidateCollective(Load("testbed"), s).message().find("OMPIO's"), std::string::npos);
  s.segmentation = collective::Segmentation::kDynamic;
  s.ompio_async = OmpioAsync::kOff;
  EXPECT_NE(ValidateCollective(Load("testbed"), s).message().find("fcoll_vulcan_async_io"),
            std::string::npos);
  s.ompio_async = OmpioAsync::kAuto;
  // More groups than ranks: one rank each, as the MPIs cap cb_nodes.
  s.plan = CollectivePlan::kOmpio;
  s.saturation_point_bytes = 0;
  s.cb_nodes = 13;
  const json capped = RunForked(Load("testbed"), s);
  ASSERT_FALSE(capped.contains("error")) << capped.dump();
  EXPECT_EQ(capped["aggregator_count"], 12);
}

// The platform's measured k, as iorelay-sim-collective --measured-k [--mpi M] takes it: the MPI's
// own, else the single one; none, or an unknown MPI, is an error naming what is missing.
TEST(CollectiveSimTest, MeasuredSaturationPointIsTheMpisOwnOrRefused) {
  const Platform testbed = Load("testbed");
  ASSERT_GT(testbed.collective.saturation_point_by_mpi.count("mpich"), 0u);
  EXPECT_EQ(*MeasuredSaturationPoint(testbed.collective, "mpich"),
            testbed.collective.saturation_point_by_mpi.at("mpich"));
  EXPECT_EQ(*MeasuredSaturationPoint(testbed.collective, ""),
            testbed.collective.saturation_point_bytes);
  CollectiveParams only_ompio;
  only_ompio.saturation_point_by_mpi["ompio"] = 64 * kMiB;
  EXPECT_EQ(*MeasuredSaturationPoint(only_ompio, "ompio"), 64 * kMiB);
  auto none = MeasuredSaturationPoint(only_ompio, "mpich");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("k is not measured (no "
                                         "collective.saturation_point_by_mpi.mpich or "
                                         "collective.saturation_point"),
            std::string::npos)
      << none.status().message();
  EXPECT_NE(none.status().message().find("--component mpich"), std::string::npos);
  EXPECT_FALSE(MeasuredSaturationPoint(Load("cori").collective, "").ok());
  auto unknown = MeasuredSaturationPoint(testbed.collective, "mvapich");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("MPI 'mvapich' unknown"), std::string::npos);
  // A k of 0 in the file is no measurement: the platform is refused, naming the key (not read
  // as "not measured" when the key is there).
  std::ifstream in(std::string(PLATFORMS_DIR) + "/testbed.json");
  json doc = json::parse(in);
  doc["collective"]["saturation_point"] = "0B";
  ExpectRefused(doc, "collective.saturation_point must be above 0");
  doc["collective"]["saturation_point"] = "1MiB";
  doc["collective"]["saturation_point_by_mpi"]["ompio"] = "0B";
  ExpectRefused(doc, "saturation_point_by_mpi.ompio must be above 0");
}

TEST(CollectiveSimTest, CoriThroughputRisesWithNodesThenSaturates) {
  const Platform cori = Load("cori");
  std::map<uint32_t, double> bw;
  for (uint32_t nodes : {1u, 2u, 4u, 8u, 16u, 32u})
    bw[nodes] = Bandwidth(cori, Cori(nodes, 16, 16));
  for (const auto& [nodes, mbps] : bw) RecordProperty("MBps_" + std::to_string(nodes), mbps);
  EXPECT_GT(bw[2], 1.2 * bw[1]);
  EXPECT_GT(bw[4], 1.5 * bw[2]);
  EXPECT_GT(bw[8], 2 * bw[1]);
  for (uint32_t nodes : {16u, 32u}) {  // saturated: within 10% of 8 nodes
    EXPECT_NEAR(bw[nodes] / bw[8], 1.0, 0.10) << nodes << " nodes";
  }
}

TEST(CollectiveSimTest, CoriSpreadingAggregatorsOverNodesBeatsPackingThem) {
  // 16 nodes, 16 aggregators, at most 8 per node: one per node, or 8 on each of 2 nodes.
  const Platform cori = Load("cori");
  const json spread = RunForked(cori, Cori(16, 16, 8));
  const json packed = RunForked(cori, Cori(16, 16, 8, /*packed=*/true));
  ASSERT_FALSE(spread.contains("error") || packed.contains("error"));
  EXPECT_EQ(spread["aggregators"][1], 16);  // the first rank of node 1
  EXPECT_EQ(packed["aggregators"][8], 16);  // node 0 holds the first 8
  EXPECT_GT(spread["bandwidth_MBps"].get<double>(), 1.5 * packed["bandwidth_MBps"].get<double>());
}

TEST(CollectiveSimTest, CoriMoreOstsHelpWithFewAggregatorsPerNode) {
  // 32 nodes, aggregators = OSTs: one per node, against all of them packed on 2 nodes.
  const Platform cori = Load("cori");
  const double few_8 = Bandwidth(cori, Cori(32, 8, 1));
  const double few_32 = Bandwidth(cori, Cori(32, 32, 1));
  const double many_8 = Bandwidth(cori, Cori(32, 8, 4, /*packed=*/true));
  const double many_32 = Bandwidth(cori, Cori(32, 32, 16, /*packed=*/true));
  EXPECT_GT(few_32, 3 * few_8);
  EXPECT_LT(many_32 / many_8, 1.25);  // the two nodes' NICs, not the OSTs, limit
}

// The lecture's dd: one process writing a new file sequentially, 2 MB stripes.
CollectiveSpec Dd(uint64_t bytes, int32_t stripes) {
  CollectiveSpec s;
  s.collective = false;
  s.bytes_per_rank = bytes;
  s.stripe_count = stripes;
  s.stripe_bytes = 2'000'000;
  return s;
}

TEST(CollectiveSimTest, LectureDdGains174FromOneToTenStripes) {
  const Platform lecture = Load("lecture-lustre");
  const double one = Bandwidth(lecture, Dd(2'000'000'000, 1));
  const double ten = Bandwidth(lecture, Dd(2'000'000'000, 10));
  RecordProperty("dd_1_stripe_MBps", one);
  RecordProperty("dd_10_stripes_MBps", ten);
  EXPECT_NEAR(one / 576, 1.0, 0.25);
  EXPECT_NEAR(ten / 1000, 1.0, 0.25);
  EXPECT_NEAR(ten / one / 1.74, 1.0, 0.25);
}

// A file of `bytes` written by 2 processes on 2 nodes, each its half: one client cannot gain more
// than the dd's 1.74x, so the lecture's 2.5x for 1.5 GB files came from more than one writer.
CollectiveSpec FileOf(uint64_t bytes, int32_t stripes) {
  CollectiveSpec s = Dd(bytes / 2, stripes);
  s.nodes = 2;
  return s;
}

TEST(CollectiveSimTest, LectureSmallFilesPreferOneStripeLargeFilesEighteen) {
  Platform lecture = Load("lecture-lustre");
  const double small_1 = Bandwidth(lecture, FileOf(8'000'000, 1));
  const double small_18 = Bandwidth(lecture, FileOf(8'000'000, 18));
  const double large_1 = Bandwidth(lecture, FileOf(1'500'000'000, 1));
  const double large_18 = Bandwidth(lecture, FileOf(1'500'000'000, 18));
  EXPECT_GT(small_1, small_18);
  EXPECT_GE(large_18, 2 * large_1);
  // The per-stripe object cost is what makes the small file prefer 1 stripe: without it, 18
  // stripes win at 8 MB too.
  lecture.storage.stripe_object_ns = 0;
  EXPECT_LT(Bandwidth(lecture, FileOf(8'000'000, 1)), Bandwidth(lecture, FileOf(8'000'000, 18)));
}

TEST(CollectiveSimTest, BadSpecsAreNamed) {
  const Platform lecture = Load("lecture-lustre");
  CollectiveSpec s = Dd(kMiB, 19);
  Status st = ValidateCollective(lecture, s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("stripe count 19"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("1 to 18"), std::string::npos) << st.message();
  EXPECT_FALSE(RunCollective(lecture, s).ok());  // refused before SimGrid starts
  s.stripe_count = 1;
  s.nodes = 0;
  EXPECT_NE(ValidateCollective(lecture, s).message().find("nodes"), std::string::npos);
  s = Cori(2, 16, 16);
  s.cb_buffer_bytes = 0;
  EXPECT_NE(ValidateCollective(Load("cori"), s).message().find("cb_buffer_size"),
            std::string::npos);
}

TEST(CollectiveSimTest, StripeObjectCostNeedsAMetadataServer) {
  json doc = {{"name", "p"},
              {"network", {{"latency", "1us"}}},
              {"compute", {{"nic", "1GBps"}}},
              {"ionode", {{"nic", "1GBps"}}},
              {"storage",
               {{"kind", "pfs"},
                {"targets", 2},
                {"nic", "1GBps"},
                {"stripe_size", "1MiB"},
                {"stripe_count", 1},
                {"device", "ssd"},
                {"stripe_object", "1ms"}}}};
  ExpectRefused(doc, "storage.stripe_object needs storage.metadata_service");
  doc["storage"]["metadata_service"] = "100us";
  auto p = ParsePlatform(doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->storage.stripe_object_ns, 1'000'000);
  EXPECT_EQ(ToJson(*p)["storage"]["stripe_object"], "1ms");
}

}  // namespace
}  // namespace iorelay::sim
