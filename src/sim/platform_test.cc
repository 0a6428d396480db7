// Platform files: every key checked, units parsed, one-line errors naming the valid choices;
// the shipped platforms/*.json parse.
#include "sim/platform.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/workload_pattern.h"

namespace iorelay::sim {
namespace {

using nlohmann::json;

json Minimal() {
  return {{"name", "m"},
          {"network", {{"latency", "1.5us"}}},
          {"compute", {{"nic", "10Gbps"}}},
          {"ionode", {{"nic", "1.5GBps"}}},
          {"storage",
           {{"kind", "pfs"},
            {"targets", 4},
            {"nic", "10Gbps"},
            {"stripe_size", "1MiB"},
            {"stripe_count", 2},
            {"device", "ssd"}}}};
}

std::string Error(const json& doc) {
  auto p = ParsePlatform(doc);
  return p.ok() ? "" : p.status().message();
}

TEST(PlatformTest, ParsesUnits) {
  auto p = ParsePlatform(Minimal());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_DOUBLE_EQ(p->network.latency_s, 1.5e-6);
  EXPECT_DOUBLE_EQ(p->compute.nic_Bps, 1.25e9);
  EXPECT_DOUBLE_EQ(p->ionode.nic_Bps, 1.5e9);
  EXPECT_EQ(p->storage.stripe_bytes, 1u << 20);
  EXPECT_EQ(p->storage.stripe_count, 2);
  EXPECT_EQ(p->storage.device.name, "ssd");
}

TEST(PlatformTest, UnknownKeyNamesTheValidOnes) {
  json doc = Minimal();
  doc["ionode"]["slot"] = 4;
  const std::string e = Error(doc);
  EXPECT_NE(e.find("unknown key 'slot'"), std::string::npos) << e;
  EXPECT_NE(e.find("slots"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(PlatformTest, MissingValueIsNamed) {
  json doc = Minimal();
  doc["storage"].erase("nic");
  EXPECT_NE(Error(doc).find("missing value storage.nic"), std::string::npos) << Error(doc);
  doc = Minimal();
  doc.erase("compute");
  EXPECT_NE(Error(doc).find("missing section 'compute'"), std::string::npos) << Error(doc);
}

TEST(PlatformTest, BadUnitsAndChoicesAreRefused) {
  json doc = Minimal();
  doc["compute"]["nic"] = "10Gbit/s";
  EXPECT_NE(Error(doc).find("compute.nic"), std::string::npos) << Error(doc);
  doc = Minimal();
  doc["storage"]["kind"] = "lustre";
  EXPECT_NE(Error(doc).find("valid: pfs, nfs"), std::string::npos) << Error(doc);
  doc = Minimal();
  doc["ionode"]["layout"] = "torus";
  EXPECT_NE(Error(doc).find("ionode.layout 'torus' unknown (valid: spread, bgq)"),
            std::string::npos)
      << Error(doc);
  doc = Minimal();
  doc["storage"]["device"] = "tape";
  EXPECT_NE(Error(doc).find("storage.device"), std::string::npos) << Error(doc);
  doc = Minimal();
  doc["storage"]["noise"] = 1.5;
  EXPECT_NE(Error(doc).find("storage.noise must be a number in [0, 1)"), std::string::npos)
      << Error(doc);
  doc = Minimal();
  doc["storage"]["metanode_share"] = -0.5;
  EXPECT_NE(Error(doc).find("storage.metanode_share must be a number >= 0"), std::string::npos)
      << Error(doc);
  doc = Minimal();
  doc["storage"]["metanode_share"] = 1.5;  // an update may last longer than the write
  EXPECT_TRUE(ParsePlatform(doc).ok());
  doc = Minimal();
  doc["storage"]["stripe_count"] = 5;
  EXPECT_NE(Error(doc).find("stripe_count"), std::string::npos) << Error(doc);
  doc = Minimal();
  doc["storage"]["file_writes_per_client"] = -1;
  EXPECT_NE(Error(doc).find("storage.file_writes_per_client must be an integer >= 0"),
            std::string::npos)
      << Error(doc);
  doc = Minimal();
  doc["storage"]["device"] = "ssd,access=1MiB:4ms/64KiB:1ms";
  EXPECT_NE(Error(doc).find("device access sizes must increase"), std::string::npos) << Error(doc);
}

TEST(PlatformTest, StorageAccessTimesAndFileWriteLimitRoundTrip) {
  json doc = Minimal();
  doc["storage"]["device"] = "seek=0us,bw=1GBps,access=32KiB:1ms/1MiB:4ms";
  doc["storage"]["file_writes_per_client"] = 2;
  auto p = ParsePlatform(doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->storage.file_writes_per_client, 2);
  ASSERT_EQ(p->storage.device.access_ns.size(), 2u);
  EXPECT_EQ(p->storage.device.access_ns[1].first, 1u << 20);
  EXPECT_EQ(p->storage.device.access_ns[1].second, 4'000'000);
  const json out = ToJson(*p);
  EXPECT_EQ(out["storage"]["device"]["access"], "32KiB:1ms/1MiB:4ms");
  EXPECT_EQ(out["storage"]["file_writes_per_client"], 2);
}

// A whole-file token and byte-range tokens are two models of one thing: one at a time.
TEST(PlatformTest, RangeTokensRoundTripAndExcludeTheWholeFileToken) {
  json doc = Minimal();
  doc["storage"]["range_token"] = "250us";
  auto p = ParsePlatform(doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->storage.range_token_ns, 250'000);
  EXPECT_EQ(ToJson(*p)["storage"]["range_token"], "250us");
  doc["storage"]["token_handoff"] = "1ms";
  EXPECT_EQ(Error(doc),
            "platform: storage.token_handoff (a whole-file token) and storage.range_token "
            "(byte-range tokens) exclude each other");
}

TEST(PlatformTest, MetadataServerKeysNeedAMetadataServer) {
  json doc = Minimal();
  doc["storage"]["metadata_threads"] = 4;
  EXPECT_EQ(Error(doc),
            "platform: storage.metadata_threads needs storage.metadata_service (the metadata "
            "server)");
  doc["storage"]["metadata_service"] = "50us";
  doc["storage"]["directory_changes"] = 1;
  auto p = ParsePlatform(doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->storage.metadata_threads, 4);
  EXPECT_EQ(ToJson(*p)["storage"]["directory_changes"], 1);
  doc["storage"]["metadata_servers"] = 0;
  EXPECT_NE(Error(doc).find("storage.metadata_servers must be an integer >= 1"), std::string::npos)
      << Error(doc);
  doc["storage"]["metadata_servers"] = 4;
  EXPECT_EQ(ToJson(*ParsePlatform(doc))["storage"]["metadata_servers"], 4);
  doc["storage"]["directory_stripes"] = 5;
  EXPECT_EQ(Error(doc), "platform: storage.directory_stripes exceeds storage.metadata_servers");
  doc["storage"]["directory_stripes"] = 4;
  EXPECT_EQ(ToJson(*ParsePlatform(doc))["storage"]["directory_stripes"], 4);
  doc["storage"]["metadata_threads"] = 0;
  EXPECT_NE(Error(doc).find("storage.metadata_threads must be an integer >= 1"), std::string::npos)
      << Error(doc);
}

TEST(PlatformTest, CpuSectionNeedsItsCoresAndKnownKeys) {
  json doc = Minimal();
  doc["cpu"] = {{"direct_call", "12us"}};
  EXPECT_EQ(Error(doc), "platform: missing value cpu.cores");
  doc["cpu"]["cores"] = 2;
  doc["cpu"]["copy"] = "8GBps";
  auto p = ParsePlatform(doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->cpu.cores, 2);
  EXPECT_EQ(p->cpu.direct_call_ns, 12'000);
  EXPECT_DOUBLE_EQ(p->cpu.copy_Bps, 8e9);
  EXPECT_EQ(ToJson(*p)["cpu"]["direct_call"], "12us");
  EXPECT_FALSE(ToJson(*ParsePlatform(Minimal())).contains("cpu"));
  EXPECT_EQ(p->cpu.scope, CpuScope::kMachine);
  doc["cpu"]["scope"] = "node";
  EXPECT_EQ(ParsePlatform(doc)->cpu.scope, CpuScope::kNode);
  EXPECT_EQ(ToJson(*ParsePlatform(doc))["cpu"]["scope"], "node");
  doc["cpu"]["scope"] = "rack";
  EXPECT_EQ(Error(doc), "platform: cpu.scope 'rack' unknown (valid: machine, node)");
  doc["cpu"]["scope"] = "node";
  doc["cpu"]["ionode_cal"] = "1us";
  EXPECT_NE(Error(doc).find("unknown key 'ionode_cal' in cpu"), std::string::npos);
}

TEST(PlatformTest, CollectiveSaturationPointIsOptionalBytes) {
  EXPECT_EQ(ParsePlatform(Minimal())->collective.saturation_point_bytes, 0u);
  EXPECT_FALSE(ToJson(*ParsePlatform(Minimal())).contains("collective"));
  json doc = Minimal();
  doc["collective"]["saturation_point"] = "4MiB";
  auto p = ParsePlatform(doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->collective.saturation_point_bytes, 4u << 20);
  EXPECT_EQ(ToJson(*p)["collective"]["saturation_point"], "4MiB");
  doc["collective"]["saturation_point"] = "four";
  EXPECT_NE(Error(doc).find("collective.saturation_point"), std::string::npos) << Error(doc);
  doc["collective"] = {{"k", "4MiB"}};
  EXPECT_NE(Error(doc).find("unknown key 'k' in collective"), std::string::npos) << Error(doc);
}

TEST(PlatformTest, SaturationAndSpreadPointsPerMpiAreBytesOfAKnownMpi) {
  json doc = Minimal();
  doc["collective"]["saturation_point"] = "64MiB";
  doc["collective"]["saturation_point_by_mpi"] = {{"ompio", "64MiB"}, {"romio321", "4MiB"}};
  auto p = ParsePlatform(doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->collective.saturation_point_by_mpi.at("romio321"), 4u << 20);
  EXPECT_EQ(p->collective.saturation_point_by_mpi.count("mpich"), 0u);
  const json out = ToJson(*p)["collective"];
  EXPECT_EQ(out["saturation_point"], "64MiB");
  EXPECT_EQ(out["saturation_point_by_mpi"]["romio321"], "4MiB");
  EXPECT_FALSE(out.contains("spread_point_by_mpi"));
  doc["collective"]["spread_point_by_mpi"] = {{"ompio", "5MiB"}};
  p = ParsePlatform(doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->collective.spread_point_by_mpi.at("ompio"), 5u << 20);
  EXPECT_EQ(ToJson(*p)["collective"]["spread_point_by_mpi"]["ompio"], "5MiB");
  EXPECT_FALSE(ToJson(*p)["collective"].contains("spread_point_interleaved_by_mpi"));
  doc["collective"]["spread_point_interleaved_by_mpi"] = {{"mpich", "0B"}, {"ompio", "3MiB"}};
  p = ParsePlatform(doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->collective.spread_point_interleaved_by_mpi.at("mpich"), 0u);
  EXPECT_EQ(p->collective.spread_point_interleaved_by_mpi.at("ompio"), 3u << 20);
  EXPECT_EQ(ToJson(*p)["collective"]["spread_point_interleaved_by_mpi"]["ompio"], "3MiB");
  doc["collective"]["spread_point_interleaved_by_mpi"] = {{"mpich", "soon"}};
  EXPECT_NE(Error(doc).find("collective.spread_point_interleaved_by_mpi.mpich"), std::string::npos)
      << Error(doc);
  doc["collective"]["spread_point_interleaved_by_mpi"] = {{"intelmpi", "1MiB"}};
  EXPECT_NE(Error(doc).find("unknown key 'intelmpi' in collective.spread_point_interleaved_by_mpi"),
            std::string::npos)
      << Error(doc);
  doc["collective"].erase("spread_point_interleaved_by_mpi");
  doc["collective"]["saturation_point_by_mpi"]["mpich"] = "lots";
  EXPECT_NE(Error(doc).find("collective.saturation_point_by_mpi.mpich"), std::string::npos)
      << Error(doc);
  doc["collective"]["saturation_point_by_mpi"] = {{"intelmpi", "4MiB"}};
  EXPECT_NE(Error(doc).find("unknown key 'intelmpi' in collective.saturation_point_by_mpi"),
            std::string::npos)
      << Error(doc);
}

TEST(PlatformTest, ForwardingLaddersPerMpiAreCheckedSteps) {
  json doc = Minimal();
  doc["collective"]["forwarding_by_mpi"]["mpich"] = {
      {"ladder",
       {{{"bytes_per_call", "384KiB"}, {"ratio", 0.85}, {"p", 0.008}, {"runs", 5}},
        {{"bytes_per_call", "24MiB"}, {"ratio", 1.01}, {"p", 0.84}, {"runs", 5}}}},
      {"source", "bench/collective_forwarding.py"}};
  auto p = ParsePlatform(doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const ForwardingLadder& mpich = p->collective.forwarding_by_mpi.at("mpich");
  ASSERT_EQ(mpich.steps.size(), 2u);
  EXPECT_EQ(mpich.steps[0].bytes_per_call, 384u << 10);
  EXPECT_DOUBLE_EQ(mpich.steps[1].p, 0.84);
  const json out = ToJson(*p)["collective"]["forwarding_by_mpi"]["mpich"];
  EXPECT_EQ(out["ladder"][1]["bytes_per_call"], "24MiB");
  EXPECT_EQ(out["source"], "bench/collective_forwarding.py");
  json bad = doc;
  bad["collective"]["forwarding_by_mpi"]["mpich"]["ladder"][0]["p"] = 1.5;
  EXPECT_NE(Error(bad).find("forwarding_by_mpi.mpich.ladder[0]: ratio must be > 0 and p in"),
            std::string::npos)
      << Error(bad);
  bad = doc;
  bad["collective"]["forwarding_by_mpi"]["mpich"]["ladder"][1]["runs"] = 1;
  EXPECT_NE(Error(bad).find("ladder[1].runs"), std::string::npos) << Error(bad);
  bad = doc;
  bad["collective"]["forwarding_by_mpi"]["mpich"]["ladder"] = json::array();
  EXPECT_NE(Error(bad).find("must be a non-empty list"), std::string::npos) << Error(bad);
  bad = doc;
  bad["collective"]["forwarding_by_mpi"]["intelmpi"] =
      doc["collective"]["forwarding_by_mpi"]["mpich"];
  EXPECT_NE(Error(bad).find("unknown key 'intelmpi' in collective.forwarding_by_mpi"),
            std::string::npos)
      << Error(bad);
}

TEST(PlatformTest, LinkNeedsATopology) {
  json doc = Minimal();
  doc["network"]["link"] = "1GBps";
  EXPECT_NE(Error(doc).find("network.link needs network.topology"), std::string::npos);
  doc["network"]["topology"] = "torus:2x2";
  EXPECT_EQ(Error(doc), "");
}

TEST(PlatformTest, StorageGatewaysNeedATopologyAndTheirLink) {
  json doc = Minimal();
  doc["network"]["storage_gateway_nic"] = "6GBps";
  EXPECT_EQ(Error(doc), "platform: network.storage_gateway_nic needs network.storage_gateways");
  doc["network"].erase("storage_gateway_nic");
  doc["network"]["storage_gateways"] = 2;
  EXPECT_NE(Error(doc).find("network.storage_gateways needs network.topology and network.link"),
            std::string::npos)
      << Error(doc);
  doc["network"]["topology"] = "torus:2x2";
  doc["network"]["link"] = "1GBps";
  EXPECT_NE(Error(doc).find("missing value network.storage_gateway_nic"), std::string::npos)
      << Error(doc);
  doc["network"]["storage_gateway_nic"] = "6GBps";
  auto p = ParsePlatform(doc);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->network.storage_gateways, 2);
  EXPECT_DOUBLE_EQ(p->network.storage_gateway_nic_Bps, 6e9);
  EXPECT_EQ(ToJson(*p)["network"]["storage_gateways"], 2);
  doc["network"]["storage_gateways"] = -1;
  EXPECT_NE(Error(doc).find("network.storage_gateways must be an integer >= 0"), std::string::npos)
      << Error(doc);
}

TEST(PlatformTest, ShippedPlatformsParse) {
  for (const char* name : {"local", "marenostrum4", "marenostrum4-nominal", "santos-dumont", "mira",
                           "cori", "testbed", "lecture-lustre"}) {
    auto p = LoadPlatform(std::string(PLATFORMS_DIR) + "/" + name + ".json");
    EXPECT_TRUE(p.ok()) << name << ": " << p.status().message();
  }
  EXPECT_FALSE(LoadPlatform("/nonexistent.json").ok());
}

TEST(WorkloadPatternTest, OffsetsAsTheBench) {
  PatternSpec s;
  s.spatiality = Spatiality::kStrided;
  s.request_bytes = 4096;
  s.segments = 3;
  s.ranks = 4;
  s.nodes = 2;
  auto p = MakePattern(s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->RequestsPerRank(), 3u);
  EXPECT_EQ(p->Offset(1, 2), (2 * 4 + 1) * 4096u);  // segment 2, rank 1
  EXPECT_EQ(p->NodeOf(3), 1u);
  s.spatiality = Spatiality::kContiguous;
  s.segments = 0;
  s.total_bytes = 4 * 8 * 4096;
  p = MakePattern(s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->shape.block_bytes, 8 * 4096u);
  EXPECT_EQ(p->Offset(2, 3), 2 * 8 * 4096u + 3 * 4096u);
  s.layout = Layout::kFilePerProcess;
  p = MakePattern(s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->Offset(2, 3), 3 * 4096u);
  EXPECT_EQ(p->File(2), 3u);
  s.spatiality = Spatiality::kStrided;
  EXPECT_FALSE(MakePattern(s).ok());
}

}  // namespace
}  // namespace iorelay::sim
