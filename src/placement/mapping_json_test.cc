// The mapping file: exactly {"mapping": {"<node id>": <daemon index>}} plus extra keys, and the
// reader rejects malformed files.
#include "placement/mapping_json.h"

#include <gtest/gtest.h>

#include "placement/bgq_layout.h"
#include "placement/policy.h"

namespace iorelay::placement {
namespace {

TEST(MappingJsonTest, WritesNodeIdToDaemonIndex) {
  Result<Torus> t = Torus::Make({4, 4, 4, 4, 2});
  ASSERT_TRUE(t.ok());
  Result<IoLayout> l = MakeBgqLayout(*t);
  ASSERT_TRUE(l.ok());
  const Assignment a = RouteAwareAssignment(*t, *l, PolicyOptions{});
  const nlohmann::json doc =
      MappingDocument(*t, *l, a, "route-aware", DaemonUnit::kIonode, nullptr);
  ASSERT_TRUE(doc["mapping"].is_object());
  EXPECT_EQ(doc["mapping"].size(), 512u);
  EXPECT_EQ(doc["daemons"], 4);
  EXPECT_EQ(doc["topology"], "torus:4x4x4x4x2:order=ABCDE");
  EXPECT_FALSE(doc.contains("metrics"));
  for (int v = 0; v < 512; ++v) {
    EXPECT_EQ(doc["mapping"][std::to_string(v)], l->ionode_of_bridge[a[v]]);
  }
  Result<std::vector<int32_t>> back = ParseMapping(doc.dump());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, DaemonIndices(*l, a, DaemonUnit::kIonode));
  const nlohmann::json by_bridge =
      MappingDocument(*t, *l, a, "route-aware", DaemonUnit::kBridge, nullptr);
  EXPECT_EQ(by_bridge["daemons"], 8);
  EXPECT_EQ(by_bridge["mapping"]["0"], a[0]);
}

TEST(MappingJsonTest, ParseRejectsMalformed) {
  for (const char* text : {"", "[]", "{}", R"({"mapping": []})", R"({"mapping": {"x": 1}})",
                           R"({"mapping": {"-1": 1}})", R"({"mapping": {"1": "a"}})",
                           R"({"mapping": {"1": -2}})", R"({"mapping": {"1 ": 0}})"}) {
    EXPECT_FALSE(ParseMapping(text).ok()) << text;
  }
  Result<std::vector<int32_t>> sparse = ParseMapping(R"({"mapping": {"2": 1}, "extra": 5})");
  ASSERT_TRUE(sparse.ok());
  EXPECT_EQ(*sparse, std::vector<int32_t>({-1, -1, 1}));
}

}  // namespace
}  // namespace iorelay::placement
