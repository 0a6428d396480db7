// Tests of iorelay-bench's option parsing and request offsets (no MPI, no files).
#include "options.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "layout.h"

namespace iorelay::bench {
namespace {

Options Parse(std::vector<std::string> args, uint32_t ranks = 4) {
  auto r = ParseOptions(args, ranks);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Options{};
}

TEST(BenchOptions, SizesTakeSuffixes) {
  EXPECT_EQ(*ParseSize("64K"), 65536u);
  EXPECT_EQ(*ParseSize("2m"), 2u << 20);
  EXPECT_EQ(*ParseSize("1G"), 1u << 30);
  EXPECT_FALSE(ParseSize("").ok());
  EXPECT_FALSE(ParseSize("12X").ok());
  EXPECT_FALSE(ParseSize("-4K").ok());
}

TEST(BenchOptions, NeitherWriteNorReadMeansBoth) {
  Options o = Parse({});
  EXPECT_TRUE(o.write);
  EXPECT_TRUE(o.read);
}

TEST(BenchOptions, TotalGivesBlockForContiguous) {
  Options o = Parse({"--total", "4M", "--request", "64K"});
  EXPECT_EQ(o.block_bytes, 1u << 20);
  EXPECT_EQ(o.segments, 1u);
  EXPECT_EQ(ShapeOf(o).RequestsPerRank(), 16u);
}

TEST(BenchOptions, TotalGivesSegmentsForStrided) {
  Options o = Parse({"--spatiality", "strided", "--total", "4M", "--request", "64K"});
  EXPECT_EQ(o.block_bytes, 64u << 10);
  EXPECT_EQ(o.segments, 16u);
}

TEST(BenchOptions, RejectsInconsistentCombinations) {
  const std::vector<std::vector<std::string>> bad = {
      {"--layout", "fpp", "--spatiality", "strided"},
      {"--spatiality", "strided", "--block", "128K"},
      {"--total", "1M", "--block", "64K"},
      {"--odirect", "--request", "1000"},
      {"--wearout"},
      {"--request", "64K", "--block", "96K"},
      {"--total", "1K", "--request", "64K"},
      {"--bogus"},
      {"--request"},
      {"--name", "a/b"},
      {"--collective"},
      {"--hint", "cb_nodes=2"},
      {"--api", "mpiio", "--hint", "cb_nodes"},
      {"--api", "mpiio", "--odirect"},
      {"--api", "mpiio", "--collective", "--stonewall", "1"},
      {"--api", "hdf5"},
  };
  for (const auto& args : bad) EXPECT_FALSE(ParseOptions(args, 4).ok()) << args[0];
}

TEST(BenchOptions, MpiioTakesCollectiveAndHintsInOrder) {
  Options o = Parse({"--api", "mpiio", "--collective", "--hint", "cb_nodes=2", "--hint",
                     "romio_cb_write=enable"});
  EXPECT_EQ(o.api, Api::kMpiio);
  EXPECT_TRUE(o.collective);
  EXPECT_EQ(o.hints, (std::vector<std::string>{"cb_nodes=2", "romio_cb_write=enable"}));
  EXPECT_EQ(Parse({}).api, Api::kPosix);
  Options independent = Parse({"--api", "mpiio", "--stonewall", "1"});  // no collective calls
  EXPECT_FALSE(independent.collective);
}

TEST(BenchOptions, PrintConfigRoundTrips) {
  Options o = Parse({"--spatiality", "strided", "--total", "4M", "--odirect", "--request", "8K",
                     "--print-config"});
  ASSERT_TRUE(o.printed_config.is_object());
  EXPECT_EQ(o.printed_config["total"], 4u << 20);
  EXPECT_EQ(o.printed_config["spatiality"], "strided");
  EXPECT_EQ(o.printed_config["segments"], 0u);  // derived, so printed as given
  const std::string path = ::testing::TempDir() + "/bench_options_test.json";
  std::ofstream(path) << o.printed_config.dump();
  Options back = Parse({"--config", path, "--print-config"});
  EXPECT_EQ(back.printed_config, o.printed_config);
  Options derived = Parse({"--config", path});
  EXPECT_EQ(derived.segments, (4u << 20) / 4 / (8u << 10));
  std::remove(path.c_str());
}

TEST(BenchOptions, HelpComesFromTheTable) {
  const std::string help = Usage();
  for (const char* entry : {"--layout fpp|shared", "--request SIZE", "--stonewall SECONDS",
                            "--print-config", "Exit status"}) {
    EXPECT_NE(help.find(entry), std::string::npos) << entry;
  }
}

TEST(BenchLayout, SharedContiguousOwnsOneBlock) {
  Options o = Parse({"--request", "8K", "--block", "32K"});
  EXPECT_EQ(ShapeOf(o).Offset(2, 4, 0), 64u << 10);
  EXPECT_EQ(ShapeOf(o).Offset(2, 4, 3), (64u + 24u) << 10);
}

TEST(BenchLayout, StridedInterleavesRanks) {
  Options o = Parse({"--spatiality", "strided", "--request", "8K", "--segments", "3"});
  // Segment k of rank r at (k * P + r) * t.
  EXPECT_EQ(ShapeOf(o).Offset(1, 4, 0), 8u << 10);
  EXPECT_EQ(ShapeOf(o).Offset(1, 4, 2), (2 * 4 + 1) * (8u << 10));
}

TEST(BenchLayout, FilePerProcessStartsAtZero) {
  Options o = Parse({"--layout", "fpp", "--request", "8K", "--block", "32K"});
  EXPECT_EQ(ShapeOf(o).Offset(3, 4, 1), 8u << 10);
  EXPECT_EQ(FilePath(o, 3), "./iorelay-bench.dat.000003");
  EXPECT_EQ(NodeCount(Parse({"--ranks-per-node", "3"}, 4), 4), 2u);
}

}  // namespace
}  // namespace iorelay::bench
