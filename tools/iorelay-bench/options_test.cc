// Tests of iorelay-bench's option parsing and request offsets (no MPI, no files).
#include "options.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "hints.h"
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

namespace iorelay::bench {
namespace {

// MPI ignores a key it does not know and ROMIO a value it cannot read: both are refused here,
// naming the hint and what it accepts.
TEST(BenchHints, HintsMpiWouldIgnoreAreRefusedByName) {
  for (const char* good :
       {"cb_nodes=4", "romio_cb_write=enable", "romio_ds_write=disable", "striping_factor=4",
        "striping_unit=1048576", "cb_config_list=*:2", "cb_config_list=node1:4,node2,*:*",
        "romio_no_indep_rw=true", "access_style=write_once,sequential", "file_perm=0644"}) {
    EXPECT_TRUE(CheckHint(good).ok()) << good << ": " << CheckHint(good).message();
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"cb_node=4", "unknown MPI-IO hint 'cb_node'"},
      {"cb_nodes=0", "cb_nodes wants a whole number above 0"},
      {"cb_nodes=four", "hint cb_nodes=four"},
      {"striping_factor=-2", "striping_factor wants a whole number above 0"},
      {"romio_cb_write=on", "romio_cb_write wants enable, disable or automatic"},
      {"romio_no_indep_rw=yes", "true or false"},
      {"cb_config_list=*:0", "cb_config_list wants host[:count]"},
      {"cb_config_list=:2", "cb_config_list"},
      {"access_style=fast", "access_style wants a comma list"},
      {"file_perm=0999", "octal"},
  };
  for (const auto& [text, want] : bad) {
    const Status s = CheckHint(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.message().find(want), std::string::npos) << s.message();
  }
  // Through the options: the whole command line is refused.
  auto parsed = ParseOptions({"--api", "mpiio", "--hint", "romio_cb_write=yes"}, 4);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("romio_cb_write"), std::string::npos);
}

}  // namespace
}  // namespace iorelay::bench

namespace iorelay::bench {
namespace {

TEST(BenchViews, ViewsNeedMpiioASharedStridedFileAndEveryRequest) {
  Options o = Parse({"--api", "mpiio", "--collective", "--spatiality", "strided", "--view",
                     "subarray", "--requests-per-call", "4"});
  EXPECT_EQ(o.view, View::kSubarray);
  EXPECT_EQ(o.requests_per_call, 4u);
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--spatiality", "strided", "--view", "vector"}, "--view needs --api mpiio"},
      {{"--api", "mpiio", "--view", "vector"}, "--spatiality strided"},
      {{"--api", "mpiio", "--layout", "fpp", "--spatiality", "strided", "--view", "vector"},
       "--layout shared"},
      {{"--api", "mpiio", "--spatiality", "strided", "--view", "vector", "--stonewall", "1"},
       "no --stonewall"},
      {{"--api", "mpiio", "--requests-per-call", "2"}, "--requests-per-call needs --view"},
      {{"--api", "mpiio", "--view", "diagonal"}, "none|vector|subarray"},
  };
  for (const auto& [args, want] : bad) {
    auto r = ParseOptions(args, 4);
    ASSERT_FALSE(r.ok()) << args.back();
    EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
  }
}

// A view whose datatype would not fit MPI's ints is refused by name, before MPI sees it: the
// vector's stride is request x ranks, the subarray's row is request x tile columns.
TEST(BenchViews, ViewsBeyondAnMpiIntAreRefusedByName) {
  const std::vector<std::string> vector = {"--api",      "mpiio",  "--spatiality", "strided",
                                           "--view",     "vector", "--request",    "1G",
                                           "--segments", "2"};
  EXPECT_TRUE(ParseOptions(vector, 1).ok());  // a 1 GiB stride fits
  auto r = ParseOptions(vector, 4);           // 4 GiB does not
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--view vector: the stride, --request x 4 ranks = "
                                      "4294967296 bytes, must fit an MPI int"),
            std::string::npos)
      << r.status().message();
  std::vector<std::string> subarray = vector;
  subarray[5] = "subarray";
  EXPECT_TRUE(ParseOptions(subarray, 1).ok());  // one tile: a row of 1 GiB
  r = ParseOptions(subarray, 3);                // 1 x 3 tiles: a row of 3 GiB
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--view subarray: the array's 2 rows"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("3221225472 bytes a row"), std::string::npos);
}

// The tiles of every rank count cover the 2D array once, rank r's request i being row i of its
// tile; the vector view keeps the strided pattern's offsets.
TEST(BenchViews, SubarrayTilesCoverTheArrayOnce) {
  EXPECT_EQ(TileOf(4).rows, 2u);
  EXPECT_EQ(TileOf(6).cols, 3u);
  EXPECT_EQ(TileOf(7).rows, 1u);
  for (uint32_t ranks = 1; ranks <= 12; ++ranks) {
    Options o = Parse({"--api", "mpiio", "--spatiality", "strided", "--view", "subarray",
                       "--request", "1K", "--segments", "3"},
                      ranks);
    const TileGrid g = TileOf(ranks);
    ASSERT_EQ(g.rows * g.cols, ranks);
    std::vector<int> owner(ranks * 3, -1);  // by request-sized cell of the file
    for (uint32_t r = 0; r < ranks; ++r) {
      for (uint64_t i = 0; i < 3; ++i) {
        const uint64_t cell = RequestOffset(o, r, ranks, i) / 1024;
        ASSERT_LT(cell, owner.size());
        EXPECT_EQ(owner[cell], -1) << ranks << " ranks: cell " << cell << " twice";
        owner[cell] = static_cast<int>(r);
        // Brute force: the cell's 2D coordinates are the tile's.
        const uint64_t row = cell / g.cols, col = cell % g.cols;
        EXPECT_EQ(row / 3, r / g.cols);
        EXPECT_EQ(col, r % g.cols);
        EXPECT_EQ(row % 3, i);
      }
    }
  }
  Options v = Parse({"--api", "mpiio", "--spatiality", "strided", "--view", "vector"});
  EXPECT_EQ(RequestOffset(v, 1, 4, 2), ShapeOf(v).Offset(1, 4, 2));
}

}  // namespace
}  // namespace iorelay::bench
