// Placement policies are pure: checked here with exact expected mappings.
#include "client/placement.h"

#include <gtest/gtest.h>

#include <set>

namespace iorelay::client {
namespace {

TEST(Placement, ParsesNames) {
  EXPECT_EQ(ParsePlacementName("")->kind, PlacementKind::kBlock);
  EXPECT_EQ(ParsePlacementName("block")->kind, PlacementKind::kBlock);
  EXPECT_EQ(ParsePlacementName("round-robin")->kind, PlacementKind::kRoundRobin);
  EXPECT_EQ(ParsePlacementName("file-hash")->kind, PlacementKind::kFileHash);
  Result<PlacementPolicy> m = ParsePlacementName("map:/tmp/m.json");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->kind, PlacementKind::kMap);
  EXPECT_EQ(m->map_file, "/tmp/m.json");
  EXPECT_EQ(ParsePlacementName("random").status().code(), EINVAL);
  EXPECT_EQ(ParsePlacementName("map:").status().code(), EINVAL);
}

TEST(Placement, BlockGivesContiguousBlocksAsForge) {
  PlacementPolicy p;  // block
  // 8 nodes, 2 daemons: 0-3 → 0, 4-7 → 1.
  for (uint32_t n = 0; n < 8; ++n) EXPECT_EQ(*PlaceNode(p, n, 8, 2), n < 4 ? 0 : 1) << n;
  // 5 nodes, 3 daemons: n*3/5 = 0,0,1,1,2.
  int want[] = {0, 0, 1, 1, 2};
  for (uint32_t n = 0; n < 5; ++n) EXPECT_EQ(*PlaceNode(p, n, 5, 3), want[n]);
  // More daemons than nodes: each node its own daemon, spread out.
  EXPECT_EQ(*PlaceNode(p, 0, 2, 4), 0);
  EXPECT_EQ(*PlaceNode(p, 1, 2, 4), 2);
  // Node ids beyond the count wrap instead of overflowing the daemon range.
  EXPECT_LT(*PlaceNode(p, 100, 4, 2), 2);
}

TEST(Placement, RoundRobin) {
  PlacementPolicy p;
  p.kind = PlacementKind::kRoundRobin;
  for (uint32_t n = 0; n < 10; ++n) EXPECT_EQ(*PlaceNode(p, n, 10, 3), static_cast<int>(n % 3));
}

TEST(Placement, MapLooksUpNodes) {
  Result<std::map<uint32_t, int>> m = ParsePlacementMap(R"({"mapping": {"0": 1, "7": 0}})", 2);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  PlacementPolicy p;
  p.kind = PlacementKind::kMap;
  p.mapping = *m;
  EXPECT_EQ(*PlaceNode(p, 0, 8, 2), 1);
  EXPECT_EQ(*PlaceNode(p, 7, 8, 2), 0);
  EXPECT_EQ(PlaceNode(p, 3, 8, 2).status().code(), EINVAL);
}

TEST(Placement, MapRejectsBadDocuments) {
  EXPECT_FALSE(ParsePlacementMap("not json", 2).ok());
  EXPECT_FALSE(ParsePlacementMap(R"({"map": {}})", 2).ok());
  EXPECT_FALSE(ParsePlacementMap(R"({"mapping": {"x": 0}})", 2).ok());
  EXPECT_FALSE(ParsePlacementMap(R"({"mapping": {"0": 2}})", 2).ok());
  EXPECT_FALSE(ParsePlacementMap(R"({"mapping": {"0": -1}})", 2).ok());
  EXPECT_FALSE(ParsePlacementMap(R"({"mapping": {"0": "1"}})", 2).ok());
}

TEST(Placement, FileHashIsStableAndSpreads) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);  // FNV-1a 64 reference value
  std::set<int> used;
  for (int i = 0; i < 64; ++i) {
    std::string path = "/fwd/file." + std::to_string(i);
    int s = PlaceFile(path, 4);
    EXPECT_EQ(s, PlaceFile(path, 4));
    used.insert(s);
  }
  EXPECT_EQ(used.size(), 4u);
}

TEST(Placement, LockOwnerDependsOnlyOnIdentity) {
  std::set<int> used;
  for (uint64_t ino = 1; ino < 64; ++ino) {
    int s = LockOwner(2049, ino, 3);
    EXPECT_GE(s, 0);
    EXPECT_LT(s, 3);
    EXPECT_EQ(s, LockOwner(2049, ino, 3));
    used.insert(s);
  }
  EXPECT_EQ(used.size(), 3u);
  EXPECT_EQ(LockOwner(1, 1, 1), 0);
}

}  // namespace
}  // namespace iorelay::client
