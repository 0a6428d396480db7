// The simulator end to end: bytes are conserved, aIOLi beats FIFO where the paper says it does,
// direct access runs, a fixed run's output is golden, and bad input fails with a clear message.
// SimGrid allows one engine per process, so each run happens in a forked child.
#include "sim/simulation.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "sim/ionode_placement.h"
#include "sim/platform.h"
#include "testutil/forked_json_testutil.h"

namespace iorelay::sim {
namespace {

using nlohmann::json;

json PlatformDoc(const std::string& storage_kind) {
  json storage = {{"kind", storage_kind}, {"nic", "10Gbps"}, {"device", "hdd"}};
  if (storage_kind == "pfs") {
    storage["targets"] = 4;
    storage["stripe_size"] = "64KiB";
    storage["stripe_count"] = 4;
  }
  return {{"name", "test-" + storage_kind},
          {"network", {{"latency", "2us"}}},
          {"compute", {{"nic", "10Gbps"}, {"start_jitter", "10us"}}},
          {"ionode", {{"nic", "10Gbps"}, {"slots", 4}}},
          {"storage", storage}};
}

RunConfig Config(const std::string& storage_kind, int ionodes, const std::string& scheduler) {
  RunConfig c;
  auto p = ParsePlatform(PlatformDoc(storage_kind));
  EXPECT_TRUE(p.ok()) << p.status().message();
  c.platform = *p;
  c.pattern.spatiality = Spatiality::kStrided;
  c.pattern.request_bytes = 64 * 1024;
  c.pattern.segments = 8;
  c.pattern.ranks = 8;
  c.pattern.nodes = 4;
  c.ionodes = ionodes;
  c.scheduler = scheduler;
  c.seed = 3;
  // AddressSanitizer cannot follow SimGrid's raw context switches (false reports).
  c.context_factory = "thread";
  return c;
}

// Runs the simulation in a child process and returns its deterministic JSON (or an error
// object {"error": message}).
json RunForked(const RunConfig& config) {
  return testutil::ForkedJson([&] {
    auto r = Run(config);
    return r.ok() ? DeterministicJson(config, *r).dump()
                  : json{{"error", r.status().message()}}.dump();
  });
}

TEST(SimulationTest, BytesAtStorageAreTheBytesWritten) {
  for (const char* scheduler : {"fifo", "aioli", "to-agg"}) {
    const json out = RunForked(Config("pfs", 2, scheduler));
    ASSERT_FALSE(out.contains("error")) << out.dump();
    EXPECT_EQ(out["requests"], 8 * 8) << scheduler;
    EXPECT_EQ(out["bytes"], 8 * 8 * 64 * 1024) << scheduler;
    EXPECT_EQ(out["bytes_at_storage"], out["bytes"]) << scheduler;
    EXPECT_EQ(out["errors"], 0);
  }
}

TEST(SimulationTest, ReadsComeBackWhole) {
  RunConfig c = Config("pfs", 2, "aioli");
  c.pattern.write = false;
  const json out = RunForked(c);
  ASSERT_FALSE(out.contains("error")) << out.dump();
  EXPECT_EQ(out["bytes"], 8 * 8 * 64 * 1024);
  EXPECT_EQ(out["bytes_at_storage"], out["bytes"]);
}

// O_DIRECT requests go through the dispatch core's alignment check (aligned here, so none is
// refused) and merge only with each other.
TEST(SimulationTest, DirectIoRequestsAreServed) {
  RunConfig c = Config("nfs", 1, "aioli");
  c.pattern.odirect = true;
  const json out = RunForked(c);
  ASSERT_FALSE(out.contains("error")) << out.dump();
  EXPECT_EQ(out["errors"], 0);
  EXPECT_EQ(out["bytes_at_storage"], 8 * 8 * 64 * 1024);
  EXPECT_LT(out["dispatches"].get<int>(), 64);  // still merged
}

// aIOLi's claim (Lebre et al. 2006): on one disk, strided requests of several clients merged
// into large sequential dispatches beat serving them in arrival order.
TEST(SimulationTest, AioliBeatsFifoOnStridedRequestsToOneDisk) {
  const json fifo = RunForked(Config("nfs", 1, "fifo"));
  const json aioli = RunForked(Config("nfs", 1, "aioli"));
  ASSERT_FALSE(fifo.contains("error")) << fifo.dump();
  ASSERT_FALSE(aioli.contains("error")) << aioli.dump();
  EXPECT_EQ(fifo["dispatches"], 64);  // FIFO never merges
  EXPECT_LT(aioli["dispatches"].get<int>(), fifo["dispatches"].get<int>());
  EXPECT_GT(aioli["bandwidth_MiBps"].get<double>(), 2 * fifo["bandwidth_MiBps"].get<double>());
}

TEST(SimulationTest, DirectAccessRunsWithoutIoNodes) {
  const json out = RunForked(Config("pfs", 0, "fifo"));
  ASSERT_FALSE(out.contains("error")) << out.dump();
  EXPECT_EQ(out["scheduler"], "none");
  EXPECT_EQ(out["dispatches"], out["requests"]);
  EXPECT_EQ(out["bytes_at_storage"], 8 * 8 * 64 * 1024);
  EXPECT_GT(out["bandwidth_MiBps"].get<double>(), 0);
}

TEST(SimulationTest, OneActorPerNodeStillSendsEveryRanksRequests) {
  for (Issuer issuer : {Issuer::kNode, Issuer::kNodeAggregate}) {
    RunConfig c = Config("pfs", 2, "aioli");
    c.issuer = issuer;
    const json out = RunForked(c);
    ASSERT_FALSE(out.contains("error")) << out.dump();
    EXPECT_EQ(out["issuer"], IssuerName(issuer));
    EXPECT_EQ(out["requests"], 8 * 8);
    EXPECT_EQ(out["bytes_at_storage"], 8 * 8 * 64 * 1024);
    c.ionodes = 0;
    EXPECT_FALSE(Validate(c).ok());  // direct access is per rank
  }
}

// Intra-node aggregation's sender writes the gathered buffer: the requests of a node's ranks
// that continue each other in one file reach the I/O node as one request, and each rank is
// answered its share.
TEST(SimulationTest, AggregatedNodeWritesItsContiguousRequestsAsOne) {
  RunConfig c = Config("pfs", 2, "fifo");  // strided: ranks 2n and 2n+1 (node n) are adjacent
  c.issuer = Issuer::kNodeAggregate;
  const json out = RunForked(c);
  ASSERT_FALSE(out.contains("error")) << out.dump();
  EXPECT_EQ(out["requests"], 8 * 8);    // every rank's request answered
  EXPECT_EQ(out["dispatches"], 4 * 8);  // one per node and segment: FIFO merges nothing
  EXPECT_EQ(out["bytes"], 8 * 8 * 64 * 1024);
  EXPECT_EQ(out["bytes_at_storage"], out["bytes"]);
  EXPECT_EQ(out["errors"], 0);
}

// A Blue Gene/Q partition: the job fills the Mira partition torus, each of its 4 I/O nodes is
// reached through 2 bridge nodes (a node's requests enter and its replies leave at its own
// bridge), by the default shares and by route-aware placement.
TEST(SimulationTest, BlueGeneQPartitionWritesThroughBothBridgesOfEachIoNode) {
  json doc = PlatformDoc("pfs");
  doc["network"] = {{"latency", "1us"}, {"topology", kMiraPartitionTopology}, {"link", "2GBps"}};
  doc["ionode"]["layout"] = "bgq";
  RunConfig c = Config("pfs", 4, "fifo");
  auto platform = ParsePlatform(doc);
  ASSERT_TRUE(platform.ok()) << platform.status().message();
  c.platform = *platform;
  c.pattern.spatiality = Spatiality::kContiguous;
  c.pattern.request_bytes = 64 * 1024;
  c.pattern.block_bytes = 64 * 1024;
  c.pattern.segments = 1;
  c.pattern.ranks = 512;
  c.pattern.nodes = 512;
  c.issuer = Issuer::kNode;
  for (const char* placement : {"default", "route-aware"}) {
    c.placement = placement;
    const json out = RunForked(c);
    ASSERT_FALSE(out.contains("error")) << out.dump();
    EXPECT_EQ(out["network"], "torus:4x4x4x4x2");
    EXPECT_EQ(out["ionode_layout"], "bgq");
    EXPECT_EQ(out["requests"], 512) << placement;
    EXPECT_EQ(out["bytes_at_storage"], 512 * 64 * 1024) << placement;
  }
  c.ionodes = 2;  // a 512-node partition has 4
  EXPECT_NE(Validate(c).message().find("has 4 I/O nodes"), std::string::npos);
  doc["network"].erase("link");
  doc["network"].erase("topology");
  EXPECT_NE(ParsePlatform(doc).status().message().find("needs network.topology"),
            std::string::npos);
}

// With network.topology and network.link, requests cross the placement topology's links (routed
// by src/placement), so slower links give a slower run; the bytes are the same.
TEST(SimulationTest, TopologyLinksCarryTheRequests) {
  json fast_doc = PlatformDoc("pfs");
  fast_doc["network"]["topology"] = "torus:2x2";
  fast_doc["network"]["link"] = "10GBps";
  json slow_doc = fast_doc;
  slow_doc["network"]["link"] = "50MBps";
  RunConfig fast = Config("pfs", 2, "fifo");
  fast.platform = *ParsePlatform(fast_doc);
  RunConfig slow = fast;
  slow.platform = *ParsePlatform(slow_doc);
  const json f = RunForked(fast);
  const json s = RunForked(slow);
  ASSERT_FALSE(f.contains("error")) << f.dump();
  ASSERT_FALSE(s.contains("error")) << s.dump();
  EXPECT_EQ(f["network"], "torus:2x2");
  EXPECT_EQ(f["bytes_at_storage"], 8 * 8 * 64 * 1024);
  EXPECT_EQ(s["bytes_at_storage"], f["bytes_at_storage"]);
  EXPECT_LT(s["bandwidth_MiBps"].get<double>(), f["bandwidth_MiBps"].get<double>());
}

// A torus of 8 nodes (the job on 4 of them) whose direct access goes through `gateways`
// storage gateways with a link of `gateway_nic` each to SSD targets.
RunConfig GatewayConfig(int gateways, const std::string& gateway_nic, const std::string& link) {
  json doc = PlatformDoc("pfs");
  doc["network"] = {{"latency", "1us"},
                    {"topology", "torus:4x2"},
                    {"link", link},
                    {"storage_gateways", gateways},
                    {"storage_gateway_nic", gateway_nic}};
  doc["storage"]["metadata_service"] = "10us";
  doc["storage"]["device"] = "ssd";  // the gateways, not the targets, bound the run
  RunConfig c = Config("pfs", 0, "fifo");
  c.platform = *ParsePlatform(doc);
  return c;
}

// Direct access over a topology: every byte crosses the topology to a storage gateway and its
// link to the storage, the requests taking the gateways in turn; opens and closes too.
TEST(SimulationTest, DirectAccessCrossesTheTopologyThroughItsStorageGateways) {
  const json one = RunForked(GatewayConfig(1, "50MBps", "10GBps"));
  const json two = RunForked(GatewayConfig(2, "50MBps", "10GBps"));
  const json wide = RunForked(GatewayConfig(2, "10GBps", "10GBps"));
  const json slow_links = RunForked(GatewayConfig(2, "10GBps", "20MBps"));
  for (const json* out : {&one, &two, &wide, &slow_links}) {
    ASSERT_FALSE(out->contains("error")) << out->dump();
    EXPECT_EQ((*out)["network"], "torus:4x2");
    EXPECT_EQ((*out)["bytes_at_storage"], 8 * 8 * 64 * 1024);
    EXPECT_EQ((*out)["metadata_ops"], 16);
  }
  EXPECT_EQ(two["storage_gateways"], 2);
  const double mib_per_s = 50e6 / (1024 * 1024);  // one gateway's link
  EXPECT_LE(one["bandwidth_MiBps"].get<double>(), mib_per_s);
  EXPECT_GT(one["bandwidth_MiBps"].get<double>(), 0.8 * mib_per_s);
  EXPECT_GT(two["bandwidth_MiBps"].get<double>(), 1.6 * one["bandwidth_MiBps"].get<double>());
  EXPECT_LE(two["bandwidth_MiBps"].get<double>(), 2 * mib_per_s);
  EXPECT_GT(wide["bandwidth_MiBps"].get<double>(), 2 * two["bandwidth_MiBps"].get<double>());
  EXPECT_LT(slow_links["bandwidth_MiBps"].get<double>(), wide["bandwidth_MiBps"].get<double>());
  // Without gateways, direct access keeps the star network.
  RunConfig star = GatewayConfig(1, "50MBps", "10GBps");
  star.platform.network.storage_gateways = 0;
  const json s = RunForked(star);
  ASSERT_FALSE(s.contains("error")) << s.dump();
  EXPECT_EQ(s["network"], "star");
  EXPECT_FALSE(s.contains("storage_gateways"));
  EXPECT_GT(s["bandwidth_MiBps"].get<double>(), 2 * two["bandwidth_MiBps"].get<double>());
}

TEST(SimulationTest, GatewaysCarryReadsOnAnyTopologyAndOnlyDirectAccess) {
  RunConfig read = GatewayConfig(1, "50MBps", "10GBps");
  read.pattern.write = false;  // the data come back through the gateway's link
  const json r = RunForked(read);
  ASSERT_FALSE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["bytes"], 8 * 8 * 64 * 1024);
  EXPECT_LE(r["bandwidth_MiBps"].get<double>(), 50e6 / (1024 * 1024));
  EXPECT_GT(r["bandwidth_MiBps"].get<double>(), 0.8 * 50e6 / (1024 * 1024));
  // A job that fills the torus: the gateways sit on its own nodes.
  RunConfig filled = GatewayConfig(2, "50MBps", "10GBps");
  filled.pattern.nodes = 8;
  // Dragonflies, minimal and Valiant (a route and its reverse cross other links).
  RunConfig minimal = GatewayConfig(3, "50MBps", "10GBps");
  minimal.platform.network.topology = "dragonfly:3x2x2x1";
  RunConfig valiant = minimal;
  valiant.platform.network.topology = "dragonfly:3x2x2x1:routing=valiant";
  // I/O nodes never use the gateways.
  RunConfig forwarded = GatewayConfig(1, "50MBps", "10GBps");
  forwarded.ionodes = 2;
  for (const RunConfig* c : {&filled, &minimal, &valiant, &forwarded}) {
    const json out = RunForked(*c);
    ASSERT_FALSE(out.contains("error")) << out.dump();
    EXPECT_EQ(out["bytes_at_storage"], 8 * 8 * 64 * 1024);
    EXPECT_EQ(out["network"], c->platform.network.topology);
    EXPECT_EQ(out.contains("storage_gateways"), c->ionodes == 0);
  }
  EXPECT_GT(RunForked(forwarded)["bandwidth_MiBps"].get<double>(), 50e6 / (1024 * 1024));
}

// ionode.bridge_link: the data of every request cross its bridge's link to the I/O node, writes
// on the way in and reads on the way out.
TEST(SimulationTest, BridgeLinksCarryEveryRequestsData) {
  json doc = PlatformDoc("pfs");
  doc["network"]["topology"] = "torus:2x2";
  doc["network"]["link"] = "10GBps";
  doc["storage"]["device"] = "ssd";
  for (bool write : {true, false}) {
    RunConfig wide = Config("pfs", 1, "fifo");
    wide.platform = *ParsePlatform(doc);
    wide.pattern.write = write;
    json narrow_doc = doc;
    narrow_doc["ionode"]["bridge_link"] = "50MBps";
    RunConfig narrow = wide;
    narrow.platform = *ParsePlatform(narrow_doc);
    const json w = RunForked(wide);
    const json n = RunForked(narrow);
    ASSERT_FALSE(w.contains("error")) << w.dump();
    ASSERT_FALSE(n.contains("error")) << n.dump();
    EXPECT_EQ(n["bytes"], 8 * 8 * 64 * 1024) << write;
    EXPECT_LE(n["bandwidth_MiBps"].get<double>(), 50e6 / (1024 * 1024)) << write;
    EXPECT_GT(n["bandwidth_MiBps"].get<double>(), 0.8 * 50e6 / (1024 * 1024)) << write;
    EXPECT_GT(w["bandwidth_MiBps"].get<double>(), 3 * n["bandwidth_MiBps"].get<double>()) << write;
  }
  doc["network"].erase("link");
  doc["ionode"]["bridge_link"] = "2GBps";
  EXPECT_FALSE(ParsePlatform(doc).ok());  // bridges are nodes of a topology
}

// A node's writes to one file one at a time (storage.file_writes_per_client 1): each write's
// data cross to the gateway only once it holds its place, so the crossings do not overlap the
// other writes' service.
TEST(SimulationTest, GatewayWritesCrossUnderTheClientsFileLock) {
  RunConfig c = GatewayConfig(1, "10TBps", "500MBps");
  c.platform.storage.file_writes_per_client = 1;
  c.pattern.nodes = 1;  // 8 ranks, 64 writes of 64 KiB to the shared file
  const json out = RunForked(c);
  ASSERT_FALSE(out.contains("error")) << out.dump();
  const double hop_s = 65536 / 500e6;
  const double service_s = 100e-6 + 65536 / 500e6;  // ssd
  EXPECT_GT(out["simulated_time_s"].get<double>(), 0.95 * 64 * (hop_s + service_s));
}

// As the bench's --stonewall: ranks stop issuing after T simulated seconds, for every issuer.
TEST(SimulationTest, StonewallStopsRanksEarly) {
  for (Issuer issuer : {Issuer::kRank, Issuer::kNode, Issuer::kNodeAggregate}) {
    RunConfig c = Config("nfs", 1, "fifo");  // 64 requests of 64 KiB on one disk: about 0.55 s
    c.issuer = issuer;
    c.pattern.stonewall_s = 0.1;
    const json out = RunForked(c);
    ASSERT_FALSE(out.contains("error")) << out.dump();
    EXPECT_GT(out["requests"].get<int>(), 0) << IssuerName(issuer);
    EXPECT_LT(out["requests"].get<int>(), 64) << IssuerName(issuer);
    EXPECT_EQ(out["bytes_at_storage"], out["bytes"]);
    EXPECT_LT(out["simulated_time_s"].get<double>(), 0.2) << IssuerName(issuer);
  }
}

// As the bench's --wearout: after the stonewall, every rank catches up with the rank that did
// most requests by then, so all ranks do equally many (fewer than the whole pattern), for every
// issuer. Ranks on a slow start (start jitter as long as the stonewall) have done fewer.
TEST(SimulationTest, WearOutBringsEveryRankToTheMostRequestsByTheStonewall) {
  for (Issuer issuer : {Issuer::kRank, Issuer::kNode, Issuer::kNodeAggregate}) {
    RunConfig c = Config("nfs", 1, "fifo");  // 8 ranks x 8 requests of 64 KiB on one disk
    c.issuer = issuer;
    c.pattern.stonewall_s = 0.1;
    c.platform.compute.start_jitter_ns = 100'000'000;
    const json stopped = RunForked(c);
    c.pattern.wearout = true;
    const json worn = RunForked(c);
    ASSERT_FALSE(worn.contains("error")) << worn.dump();
    const int before = stopped["requests"].get<int>();
    const int after = worn["requests"].get<int>();
    EXPECT_GT(after, before) << IssuerName(issuer);
    EXPECT_LT(after, 64) << IssuerName(issuer);
    EXPECT_EQ(after % 8, 0) << IssuerName(issuer) << ": every rank the same count";
    EXPECT_EQ(worn["bytes_at_storage"], worn["bytes"]);
    EXPECT_EQ(worn["pattern"]["wearout"], true);
  }
  RunConfig bad = Config("nfs", 1, "fifo");
  bad.pattern.wearout = true;
  EXPECT_FALSE(Validate(bad).ok()) << "--wearout without --stonewall";
}

// --max-requests: every issuer stops each rank after its first N requests.
TEST(SimulationTest, MaxRequestsCapsEveryRank) {
  for (Issuer issuer : {Issuer::kRank, Issuer::kNode, Issuer::kNodeAggregate}) {
    RunConfig c = Config("pfs", 2, "fifo");  // 8 ranks x 8 strided segments
    c.issuer = issuer;
    c.pattern.max_requests = 3;
    const json out = RunForked(c);
    ASSERT_FALSE(out.contains("error")) << out.dump();
    EXPECT_EQ(out["requests"], 8 * 3) << IssuerName(issuer);
    EXPECT_EQ(out["bytes_at_storage"], 8 * 3 * 64 * 1024) << IssuerName(issuer);
  }
}

// Bandwidth with the storage setting `key` = `value` over bandwidth without it, for each
// layout: 8 ranks on 4 nodes through `ionodes` I/O nodes, one contiguous block of 8 requests
// each (shared file first, then file per process); `base` storage settings apply to both runs.
std::vector<double> RatioWithStorageSetting(const char* key, const json& value, int ionodes,
                                            const json& base = json::object()) {
  json doc = PlatformDoc("pfs");
  doc["storage"].update(base);
  const Platform without = *ParsePlatform(doc);
  doc["storage"][key] = value;
  std::vector<double> ratios;
  for (Layout layout : {Layout::kShared, Layout::kFilePerProcess}) {
    RunConfig plain = Config("pfs", ionodes, "fifo");
    plain.platform = without;
    plain.pattern.layout = layout;
    plain.pattern.spatiality = Spatiality::kContiguous;
    plain.pattern.block_bytes = 8 * 64 * 1024;
    plain.pattern.segments = 0;
    RunConfig set = plain;
    set.platform = *ParsePlatform(doc);
    const json a = RunForked(plain);
    const json b = RunForked(set);
    EXPECT_FALSE(b.contains("error")) << b.dump();
    EXPECT_EQ(b["requests"], 8 * 8);
    ratios.push_back(b["bandwidth_MiBps"].get<double>() / a["bandwidth_MiBps"].get<double>());
  }
  return ratios;
}

// storage.token_handoff: one shared file written from two I/O nodes pays for moving its token
// between them; a file per process (one writer each) never does.
TEST(SimulationTest, TokenHandoffsSlowOnlyFilesWithSeveralWriters) {
  const std::vector<double> r = RatioWithStorageSetting("token_handoff", "5ms", 2);
  EXPECT_LT(r[0], 0.9);
  EXPECT_DOUBLE_EQ(r[1], 1.0);
}

// storage.metanode_update: writes to a shared file from an I/O node that is not the file's
// metanode (its first writer) wait for an update there; a file written from one host (one I/O
// node, or a file per process) never does.
TEST(SimulationTest, MetanodeUpdatesSlowOnlyFilesWrittenFromSeveralHosts) {
  const std::vector<double> two = RatioWithStorageSetting("metanode_update", "5ms", 2);
  EXPECT_LT(two[0], 0.9);
  EXPECT_DOUBLE_EQ(two[1], 1.0);
  const std::vector<double> one = RatioWithStorageSetting("metanode_update", "5ms", 1);
  EXPECT_DOUBLE_EQ(one[0], 1.0);
  EXPECT_DOUBLE_EQ(one[1], 1.0);
  const std::vector<double> by_size = RatioWithStorageSetting("metanode_bw", "10MBps", 2);
  EXPECT_LT(by_size[0], 0.9);
  EXPECT_DOUBLE_EQ(by_size[1], 1.0);
}

// storage.metanode_share: the update lasts a share of the write's own device time; a larger share
// costs more, and still only files written from several hosts pay. (A device whose time is its
// transfer, not an 8 ms seek, so that the share is of most of the write's time.)
TEST(SimulationTest, MetanodeShareOfTheWritesDeviceTime) {
  const json device = {{"device", "seek=10us,bw=100MBps"}};
  const std::vector<double> half = RatioWithStorageSetting("metanode_share", 0.5, 2, device);
  const std::vector<double> twice = RatioWithStorageSetting("metanode_share", 2.0, 2, device);
  EXPECT_LT(half[0], 0.95);
  EXPECT_LT(twice[0], half[0]);
  EXPECT_DOUBLE_EQ(half[1], 1.0);
  EXPECT_DOUBLE_EQ(twice[1], 1.0);
  const std::vector<double> one = RatioWithStorageSetting("metanode_share", 2.0, 1, device);
  EXPECT_DOUBLE_EQ(one[0], 1.0);
}

// storage.range_token: byte-range tokens of a shared file written from two I/O nodes. Interleaved
// blocks (strided) take ranges from each other at nearly every write, and pay for it; each rank's
// own region (contiguous) is negotiated at most once per rank; one I/O node, or a file per
// process, negotiates once per file.
TEST(SimulationTest, RangeTokensCostInterleavedWritersAndNotRegionWriters) {
  json doc = PlatformDoc("pfs");
  const Platform without = *ParsePlatform(doc);
  doc["storage"]["range_token"] = "1ms";
  const Platform with = *ParsePlatform(doc);
  auto run = [&](const Platform& p, int ionodes, Layout layout, Spatiality spatiality) {
    RunConfig c = Config("pfs", ionodes, "fifo");
    c.platform = p;
    c.pattern.layout = layout;
    c.pattern.spatiality = spatiality;
    if (spatiality == Spatiality::kContiguous) {
      c.pattern.block_bytes = 8 * 64 * 1024;
      c.pattern.segments = 0;
    }
    const json r = RunForked(c);
    EXPECT_FALSE(r.contains("error")) << r.dump();
    EXPECT_EQ(r["requests"], 8 * 8);
    return r;
  };
  const json strided = run(with, 2, Layout::kShared, Spatiality::kStrided);
  // Each I/O node serves 4 ranks, whose blocks follow each other: 2 changes of hands per segment.
  EXPECT_GE(strided["range_negotiations"].get<int>(), 2 * 8) << strided.dump();
  const json strided_free = run(without, 2, Layout::kShared, Spatiality::kStrided);
  EXPECT_FALSE(strided_free.contains("range_negotiations"));
  EXPECT_LT(strided["bandwidth_MiBps"].get<double>(),
            0.9 * strided_free["bandwidth_MiBps"].get<double>());
  const json contiguous = run(with, 2, Layout::kShared, Spatiality::kContiguous);
  EXPECT_LE(contiguous["range_negotiations"].get<int>(), 8) << contiguous.dump();
  EXPECT_EQ(run(with, 1, Layout::kShared, Spatiality::kStrided)["range_negotiations"], 1);
  EXPECT_EQ(run(with, 2, Layout::kFilePerProcess, Spatiality::kContiguous)["range_negotiations"],
            8);
}

// The token is held by one host at a time: while one host writes a shared file, no other does,
// and writers queued on many hosts all finish (many ranks per node, direct access, where a
// token handed to a host before its waiting writes ran could be taken away from them).
TEST(SimulationTest, TokenHoldersWriteOneHostAtATimeAndEveryWriterFinishes) {
  json doc = PlatformDoc("pfs");
  doc["storage"]["token_handoff"] = "1ms";
  doc["storage"]["stripe_size"] = "8MiB";
  for (int ionodes : {0, 2}) {
    RunConfig c = Config("pfs", ionodes, "fifo");
    c.platform = *ParsePlatform(doc);
    c.pattern.ranks = 48;
    c.pattern.nodes = 4;
    c.pattern.spatiality = Spatiality::kContiguous;
    c.pattern.request_bytes = 1 << 20;
    c.pattern.block_bytes = 4 << 20;
    c.pattern.segments = 0;
    RunConfig fpp = c;
    fpp.pattern.layout = Layout::kFilePerProcess;
    const json shared = RunForked(c);
    const json separate = RunForked(fpp);
    ASSERT_FALSE(shared.contains("error")) << shared.dump();
    ASSERT_FALSE(separate.contains("error")) << separate.dump();
    EXPECT_EQ(shared["requests"], 48 * 4) << ionodes;
    EXPECT_GT(shared["token_handoffs"].get<int>(), 0) << ionodes;
    EXPECT_EQ(separate["token_handoffs"], 0) << ionodes;
    // Two hosts taking turns on one file move it at most as fast as one file per writer.
    EXPECT_LT(shared["bandwidth_MiBps"].get<double>(), separate["bandwidth_MiBps"].get<double>())
        << ionodes;
  }
}

// storage.file_writes_per_client: one I/O node's writes to one shared file take turns; its
// writes to a file per process do not wait.
// storage.file_writes: the storage serves one write to a file at a time, from every client, so a
// shared file with channels to spare goes no faster than one channel; files per process do.
TEST(SimulationTest, FileWritesLimitOnlySharedFilesAtTheStorage) {
  const std::vector<double> r = RatioWithStorageSetting("file_writes", 1, 0, {{"channels", 4}});
  EXPECT_LT(r[0], 0.6);
  EXPECT_DOUBLE_EQ(r[1], 1.0);
}

TEST(SimulationTest, FileWritesPerClientLimitOnlySharedFiles) {
  const std::vector<double> r = RatioWithStorageSetting("file_writes_per_client", 1, 1);
  EXPECT_LT(r[0], 0.6);
  EXPECT_DOUBLE_EQ(r[1], 1.0);
}

// storage.channels: a target serving two accesses at once is up to twice as fast for the 8
// ranks' interleaved requests to seek-bound disks (hdd), shared file or not.
TEST(SimulationTest, ChannelsServeAccessesInParallel) {
  for (double r : RatioWithStorageSetting("channels", 2, 0)) {
    EXPECT_GT(r, 1.5);
    EXPECT_LE(r, 2.0);
  }
}

// The platform's cpu section: every charge runs on one pool of cores, so with storage and network
// made nearly free the run takes the charges' sum over the cores.
TEST(SimulationTest, CpuChargesShareThePoolsCores) {
  json doc = PlatformDoc("nfs");
  doc["storage"]["device"] = "seek=0us,bw=1000GBps";
  doc["network"]["latency"] = "1ns";
  for (const char* side : {"compute", "ionode", "storage"}) doc[side]["nic"] = "10TBps";
  const auto run = [&doc](int cores, int ionodes) {
    doc["cpu"] = {{"cores", cores},
                  {"direct_call", "1ms"},
                  {"forward_request", "2ms"},
                  {"ionode_request", "1ms"},
                  {"ionode_call", "3ms"}};
    RunConfig c = Config("nfs", ionodes, "fifo");
    c.platform = *ParsePlatform(doc);
    c.pattern.nodes = 1;
    const json out = RunForked(c);
    EXPECT_FALSE(out.contains("error")) << out.dump();
    return out;
  };
  // 8 ranks x 8 requests = 64 direct calls of 1 ms.
  EXPECT_NEAR(run(1, 0)["simulated_time_s"].get<double>(), 0.064, 0.002);
  EXPECT_NEAR(run(2, 0)["simulated_time_s"].get<double>(), 0.032, 0.002);
  // Forwarded through fifo (one request per dispatch): 2 + 1 + 3 ms per request, 384 ms of CPU.
  const json fwd = run(2, 1);
  EXPECT_EQ(fwd["requests_per_dispatch"], 1.0);
  EXPECT_NEAR(fwd["simulated_time_s"].get<double>(), 0.192, 0.01);
}

// cpu.scope node: each compute node has cores of its own, so two nodes' ranks do not wait for
// each other's charges, and each I/O node its own.
TEST(SimulationTest, CpuScopeNodeGivesEachNodeItsOwnCores) {
  json doc = PlatformDoc("nfs");
  doc["storage"]["device"] = "seek=0us,bw=1000GBps";
  doc["network"]["latency"] = "1ns";
  for (const char* side : {"compute", "ionode", "storage"}) doc[side]["nic"] = "10TBps";
  const auto run = [&doc](const char* scope, int ionodes) {
    doc["cpu"] = {{"cores", 1},
                  {"scope", scope},
                  {"direct_call", "1ms"},
                  {"forward_request", "0us"},
                  {"ionode_request", "1ms"}};
    RunConfig c = Config("nfs", ionodes, "fifo");  // 8 ranks on 4 nodes, 8 requests each
    c.platform = *ParsePlatform(doc);
    const json out = RunForked(c);
    EXPECT_FALSE(out.contains("error")) << out.dump();
    return out["simulated_time_s"].get<double>();
  };
  // Direct: 64 calls of 1 ms on one core; on 4 nodes' cores, 16 each.
  EXPECT_NEAR(run("machine", 0), 0.064, 0.002);
  EXPECT_NEAR(run("node", 0), 0.016, 0.002);
  // Through 2 I/O nodes: 64 requests of 1 ms on one core, or 32 on each I/O node's.
  EXPECT_NEAR(run("machine", 2), 0.064, 0.003);
  EXPECT_NEAR(run("node", 2), 0.032, 0.003);
}

// storage.noise: repetitions with other seeds differ, a repetition with the same seed does not.
TEST(SimulationTest, StorageNoiseVariesWithTheSeed) {
  json doc = PlatformDoc("pfs");
  doc["compute"].erase("start_jitter");  // only the noise depends on the seed
  doc["storage"]["noise"] = 0.3;
  RunConfig c = Config("pfs", 2, "fifo");
  c.platform = *ParsePlatform(doc);
  c.seed = 1;
  const json a = RunForked(c);
  const json again = RunForked(c);
  c.seed = 2;
  const json b = RunForked(c);
  ASSERT_FALSE(a.contains("error")) << a.dump();
  ASSERT_FALSE(b.contains("error")) << b.dump();
  EXPECT_EQ(a["simulated_time_s"], again["simulated_time_s"]);
  EXPECT_NE(a["simulated_time_s"], b["simulated_time_s"]);
  EXPECT_EQ(b["bytes_at_storage"], 8 * 8 * 64 * 1024);
}

// storage.metadata_service: every rank opens its file once, through its I/O node or directly,
// and the metadata server serves the opens one at a time.
TEST(SimulationTest, OpensAndClosesQueueAtTheMetadataServer) {
  json doc = PlatformDoc("pfs");
  doc["storage"]["metadata_service"] = "20ms";
  for (int ionodes : {0, 2}) {
    for (Issuer issuer : {Issuer::kRank, Issuer::kNodeAggregate}) {
      if (ionodes == 0 && issuer != Issuer::kRank) continue;
      RunConfig c = Config("pfs", ionodes, "fifo");
      c.platform = *ParsePlatform(doc);
      c.issuer = issuer;
      const json out = RunForked(c);
      ASSERT_FALSE(out.contains("error")) << out.dump();
      // An open and a close per rank, in a row.
      EXPECT_EQ(out["metadata_ops"], 16) << ionodes << " " << IssuerName(issuer);
      EXPECT_GE(out["simulated_time_s"].get<double>(), 16 * 0.020);
      EXPECT_EQ(out["bytes_at_storage"], 8 * 8 * 64 * 1024);
    }
  }
}

// mdtest on the platform `doc` through `ionodes` I/O nodes: 4 ranks on `nodes` nodes, 10 files
// each.
RunConfig MdtestConfig(const json& doc, int ionodes, int nodes) {
  RunConfig c = Config(doc["storage"]["kind"].get<std::string>(), ionodes, "fifo");
  auto p = ParsePlatform(doc);
  EXPECT_TRUE(p.ok()) << p.status().message();
  if (p.ok()) c.platform = *p;
  c.pattern.ranks = 4;
  c.pattern.nodes = nodes;
  c.mdtest.files_per_rank = 10;
  return c;
}

// --mdtest: each file costs a create and a close, a stat, an open and a close, and an unlink at
// the metadata server (6 calls), and its bytes once each way; a phase's rate counts its files.
TEST(SimulationTest, MdtestPhasesMakeSixMetadataCallsPerFile) {
  json doc = PlatformDoc("pfs");
  doc["storage"]["metadata_service"] = "50us";
  doc["storage"]["metadata_stat"] = "1ms";
  doc["storage"]["device"] = "ssd";
  for (int ionodes : {0, 1}) {
    RunConfig c = MdtestConfig(doc, ionodes, /*nodes=*/2);
    c.mdtest.bytes = 4096;
    const json out = RunForked(c);
    ASSERT_FALSE(out.contains("error")) << out.dump();
    EXPECT_EQ(out["metadata_ops"], 4 * 10 * 6) << ionodes;
    EXPECT_EQ(out["requests"], 4 * 10 * 8) << ionodes;
    EXPECT_EQ(out["bytes"], 2 * 4 * 10 * 4096) << ionodes;
    EXPECT_EQ(out["bytes_at_storage"], out["bytes"]) << ionodes;
    const json& phases = out["mdtest"]["phases"];
    ASSERT_EQ(phases.size(), 4u);
    EXPECT_EQ(phases[1]["phase"], "File stat");
    for (const json& phase : phases) {
      EXPECT_EQ(phase["files"], 40) << phase.dump();
      EXPECT_GT(phase["seconds"].get<double>(), 0) << phase.dump();
    }
    // The stats queue at the one metadata server, 1 ms each: 40 of them take 40 ms and a little.
    EXPECT_GE(phases[1]["seconds"].get<double>(), 0.040);
    EXPECT_LT(phases[1]["seconds"].get<double>(), 0.045);
    // An unlink costs metadata_service (no metadata_remove), 2 ms in all.
    EXPECT_LT(phases[3]["seconds"].get<double>(), 0.005);
  }
  RunConfig c = Config("pfs", 1, "fifo");
  c.mdtest.files_per_rank = 10;
  EXPECT_NE(Validate(c).message().find("needs a metadata server"), std::string::npos);
  c.platform = *ParsePlatform(doc);
  c.issuer = Issuer::kNode;
  EXPECT_NE(Validate(c).message().find("--mdtest needs --issuer rank"), std::string::npos);
  c.issuer = Issuer::kRank;
  c.mdtest.files_per_rank = 0;
  c.mdtest.shared_directory = true;
  EXPECT_NE(Validate(c).message().find("need --mdtest N"), std::string::npos);
  doc["storage"].erase("metadata_service");
  EXPECT_NE(ParsePlatform(doc).status().message().find("metadata_stat needs storage.metadata"),
            std::string::npos);
}

// A metadata call pays the cpu section's charges as a data request does: a rank's own call
// direct_call, a forwarded one forward_request at the rank and ionode_request + ionode_call at the
// I/O node. With a nearly free metadata server, a phase of 40 stats on one core takes their sum.
TEST(SimulationTest, MetadataCallsPayTheCpuCharges) {
  json doc = PlatformDoc("nfs");
  doc["storage"]["metadata_service"] = "1ns";
  doc["storage"]["device"] = "ssd";
  doc["network"]["latency"] = "1ns";
  doc["cpu"] = {{"cores", 1},
                {"direct_call", "1ms"},
                {"forward_request", "2ms"},
                {"ionode_request", "1ms"},
                {"ionode_call", "3ms"}};
  for (int ionodes : {0, 1}) {
    const json out = RunForked(MdtestConfig(doc, ionodes, /*nodes=*/2));
    ASSERT_FALSE(out.contains("error")) << out.dump();
    const double per_call_s = ionodes == 0 ? 0.001 : 0.006;
    const double stat_s = out["mdtest"]["phases"][1]["seconds"].get<double>();
    EXPECT_NEAR(stat_s, 40 * per_call_s, 0.05 * 40 * per_call_s) << ionodes;
  }
}

// mdtest, 4 ranks on 4 nodes, 10 empty files each, on a metadata server of 1 ms per call with
// `storage` set over the platform's storage section: the seconds of `phase`.
double MdtestPhaseSeconds(const json& storage, bool shared_directory, int phase) {
  json doc = PlatformDoc("pfs");
  doc["storage"]["metadata_service"] = "1ms";
  doc["storage"]["device"] = "ssd";
  doc["storage"].update(storage);
  RunConfig c = MdtestConfig(doc, /*ionodes=*/0, /*nodes=*/4);
  c.mdtest.shared_directory = shared_directory;
  const json out = RunForked(c);
  EXPECT_FALSE(out.contains("error")) << out.dump();
  return out["mdtest"]["phases"][phase]["seconds"].get<double>();
}

// storage.metadata_threads serve calls side by side; storage.directory_changes 1 makes the
// creates and unlinks of one directory take turns, which only a shared directory feels.
TEST(SimulationTest, MetadataThreadsAndDirectoryTurns) {
  const auto phase_s = [](int threads, int directory_changes, bool shared, int phase) {
    return MdtestPhaseSeconds(
        {{"metadata_threads", threads}, {"directory_changes", directory_changes}}, shared, phase);
  };
  constexpr int kCreate = 0, kStat = 1, kRemove = 3;
  // 40 stats of 1 ms: 40 ms on one thread, a quarter of it on four.
  EXPECT_GE(phase_s(1, 0, false, kStat), 0.040);
  EXPECT_LT(phase_s(4, 0, false, kStat), 0.012);
  // 40 creates and 40 closes on four threads: 20 ms; in one directory one create at a time
  // (40 ms, the closes beside them); a directory per rank does not wait.
  EXPECT_LT(phase_s(4, 1, false, kCreate), 0.023);
  EXPECT_GE(phase_s(4, 1, true, kCreate), 0.040);
  EXPECT_GE(phase_s(4, 1, true, kRemove), 0.040);
  EXPECT_LT(phase_s(4, 0, true, kRemove), 0.012);
}

// Lustre's DNE: directories spread over the metadata servers, so ranks with a directory each
// create on two servers at once, while one shared directory stays on one server unless striped.
TEST(SimulationTest, MetadataServersShareDirectories) {
  const auto create_s = [](int servers, bool shared, int stripes = 1) {
    return MdtestPhaseSeconds(
        {{"metadata_servers", servers}, {"directory_stripes", stripes}, {"directory_changes", 1}},
        shared, /*phase=*/0);
  };
  // 40 creates and 40 closes of 1 ms on one server: 80 ms; on two, half of it, unless the
  // files share one directory; striped over both servers, it is spread again (by a hash of the
  // names, so not exactly in halves).
  EXPECT_GE(create_s(1, false), 0.080);
  EXPECT_LT(create_s(2, false), 0.045);
  EXPECT_GE(create_s(2, true), 0.080);
  EXPECT_LT(create_s(2, true, 2), 0.055);
}

// storage.metadata_open and metadata_close price an open of an existing file and a close apart
// from a create (metadata_service): mdtest's read phase opens and closes, its create phase
// creates and closes.
TEST(SimulationTest, OpensAndClosesHaveTheirOwnServiceTimes) {
  constexpr int kCreate = 0, kRead = 2;
  const json cheap_close = {{"metadata_open", "3ms"}, {"metadata_close", "0us"}};
  // 40 files on one metadata thread: reads cost 40 opens of 3 ms, creates 40 creates of 1 ms.
  EXPECT_GE(MdtestPhaseSeconds(cheap_close, false, kRead), 0.120);
  EXPECT_LT(MdtestPhaseSeconds(cheap_close, false, kRead), 0.130);
  EXPECT_GE(MdtestPhaseSeconds(cheap_close, false, kCreate), 0.040);
  EXPECT_LT(MdtestPhaseSeconds(cheap_close, false, kCreate), 0.045);
  // Without them, an open and a close cost 1 ms each: 80 ms a phase.
  EXPECT_GE(MdtestPhaseSeconds(json::object(), false, kRead), 0.080);
  json doc = PlatformDoc("pfs");
  doc["storage"]["metadata_close"] = "1ms";
  EXPECT_NE(ParsePlatform(doc).status().message().find("metadata_close needs storage.metadata"),
            std::string::npos);
}

// A pattern's ranks open a shared file (metadata_open) but create their files of a file per
// process (metadata_service): 8 ranks' creates of 20 ms queue at the one metadata server, 160 ms
// in all, where free opens leave a shared file's run as it was.
TEST(SimulationTest, FilePerProcessCreatesAndSharedFileOpens) {
  const auto seconds = [&](Layout layout, const char* create) {
    json doc = PlatformDoc("pfs");
    doc["storage"]["metadata_service"] = create;
    doc["storage"]["metadata_open"] = "0us";
    doc["storage"]["metadata_close"] = "0us";
    RunConfig c = Config("pfs", 0, "fifo");
    c.platform = *ParsePlatform(doc);
    c.pattern.layout = layout;
    c.pattern.spatiality = Spatiality::kContiguous;
    c.pattern.segments = 1;
    const json out = RunForked(c);
    EXPECT_FALSE(out.contains("error")) << out.dump();
    EXPECT_EQ(out["metadata_ops"], 16);
    return out["simulated_time_s"].get<double>();
  };
  // (The creates overlap the first ranks' writes: 72 ms more here, not all 160.)
  EXPECT_GT(seconds(Layout::kFilePerProcess, "20ms") - seconds(Layout::kFilePerProcess, "1us"),
            0.050);
  EXPECT_NEAR(seconds(Layout::kShared, "20ms"), seconds(Layout::kShared, "1us"), 1e-4);
}

// Virtual time makes a run deterministic: the same configuration gives the same numbers, run
// after run, and the numbers of tests/data/sim_golden.json until a change of the model means
// to change them (then regenerate with IORELAY_UPDATE_GOLDEN=1 and say why in the commit).
TEST(SimulationTest, GoldenOutput) {
  RunConfig c = Config("pfs", 2, "aioli");
  c.placement = "round-robin";
  const json a = RunForked(c);
  const json b = RunForked(c);
  ASSERT_FALSE(a.contains("error")) << a.dump();
  EXPECT_EQ(a.dump(2), b.dump(2));
  const std::string path = SIM_GOLDEN;
  if (std::getenv("IORELAY_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << a.dump(2) << "\n";
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const json golden = json::parse(in);
  EXPECT_EQ(a.dump(2), golden.dump(2));
}

TEST(SimulationTest, BadRunInputIsRefusedBeforeSimulating) {
  RunConfig c = Config("nfs", 1, "no-such-scheduler");
  Status s = Validate(c);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("aioli"), std::string::npos) << s.message();  // names the choices
  c = Config("nfs", 1, "fifo");
  c.placement = "closest";
  s = Validate(c);
  EXPECT_NE(s.message().find("round-robin"), std::string::npos) << s.message();
  c = Config("nfs", 9, "fifo");  // more I/O nodes than the 4 compute nodes
  EXPECT_FALSE(Validate(c).ok());
  c = Config("nfs", 1, "fifo");
  c.pattern.layout = Layout::kFilePerProcess;  // strided file-per-process does not exist
  EXPECT_FALSE(Validate(c).ok());
  c = Config("nfs", 1, "fifo");
  c.platform.cpu.cores = 2;  // charged per rank: one actor per node would hide the ranks' share
  c.issuer = Issuer::kNode;
  EXPECT_NE(Validate(c).message().find("--issuer rank only"), std::string::npos);
}

TEST(PlacementTest, PoliciesMapNodesToIoNodes) {
  const auto spread = IoLayoutKind::kSpread;
  auto block = PlaceIoNodes("", spread, "block", 4, 2);
  ASSERT_TRUE(block.ok()) << block.status().message();
  EXPECT_EQ(block->ionode_of, (std::vector<int32_t>{0, 0, 1, 1}));
  EXPECT_EQ(block->entry_of, (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(block->bridges, (std::vector<std::vector<int32_t>>{{0}, {2}}));
  auto rr = PlaceIoNodes("", spread, "round-robin", 4, 2);
  ASSERT_TRUE(rr.ok()) << rr.status().message();
  EXPECT_EQ(rr->ionode_of, (std::vector<int32_t>{0, 1, 0, 1}));
  EXPECT_FALSE(PlaceIoNodes("torus:2x2", spread, "block", 8, 2).ok());  // too few nodes
}

TEST(PlacementTest, StorageGatewaysSitOutsideTheJobWhereTheTopologyHasRoom) {
  auto outside = PlaceStorageGateways("torus:4x2", 4, 2);
  ASSERT_TRUE(outside.ok()) << outside.status().message();
  EXPECT_EQ(outside->topology, "torus:4x2");
  EXPECT_EQ(outside->nodes, (std::vector<int32_t>{4, 6}));
  auto among = PlaceStorageGateways("torus:4x2", 8, 2);  // the job fills the torus
  ASSERT_TRUE(among.ok()) << among.status().message();
  EXPECT_EQ(among->nodes, (std::vector<int32_t>{0, 4}));
  EXPECT_FALSE(PlaceStorageGateways("torus:4x2", 4, 9).ok());  // more than the nodes
  EXPECT_FALSE(PlaceStorageGateways("torus:4x2", 9, 1).ok());  // the job does not fit
}

TEST(PlacementTest, BlueGeneQLayoutHasTwoBridgesPerIoNodeAnd128NodesEach) {
  auto placed = PlaceIoNodes(kMiraPartitionTopology, IoLayoutKind::kBgq, "default", 1024, 8);
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  EXPECT_EQ(placed->topology, "torus:4x4x4x8x2");
  std::vector<std::vector<int>> per_entry(8, std::vector<int>(2, 0));
  for (int32_t v = 0; v < 1024; ++v) ++per_entry[placed->ionode_of[v]][placed->entry_of[v]];
  for (int k = 0; k < 8; ++k) {
    ASSERT_EQ(placed->bridges[k].size(), 2u);
    EXPECT_EQ(per_entry[k], (std::vector<int>{64, 64}));  // the default shares
  }
  // Route-aware moves nodes between bridges, within the balance bound of docs/placement.md.
  auto aware = PlaceIoNodes(kMiraPartitionTopology, IoLayoutKind::kBgq, "route-aware", 1024, 8);
  ASSERT_TRUE(aware.ok()) << aware.status().message();
  EXPECT_NE(aware->ionode_of, placed->ionode_of);
  // Only the partition's own I/O node count, on a torus the job fills.
  auto wrong = PlaceIoNodes(kMiraPartitionTopology, IoLayoutKind::kBgq, "default", 1024, 4);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("has 8 I/O nodes"), std::string::npos);
  EXPECT_FALSE(PlaceIoNodes("torus:4x4x4x4x2", IoLayoutKind::kBgq, "default", 256, 2).ok());
  EXPECT_FALSE(PlaceIoNodes("fattree:1x512x1", IoLayoutKind::kBgq, "default", 512, 4).ok());
  auto size = PlaceIoNodes(kMiraPartitionTopology, IoLayoutKind::kBgq, "default", 700, 5);
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.status().message().find("512, 1024"), std::string::npos)
      << size.status().message();
}

}  // namespace
}  // namespace iorelay::sim
