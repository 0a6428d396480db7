// Topology strings: accepted forms round-trip through spec(); malformed ones are rejected.
#include "placement/topology_spec.h"

#include <gtest/gtest.h>

namespace iorelay::placement {
namespace {

TEST(TopologySpecTest, ParsesAndRoundTrips) {
  for (const char* s :
       {"torus:4x4x4x4x2:order=ABCDE", "torus:8:order=A", "torus:4x4x2:order=CAB",
        "fattree:16x32x8", "dragonfly:9x4x2x2", "dragonfly:33x8x4x4:routing=valiant"}) {
    auto t = ParseTopology(s);
    ASSERT_TRUE(t.ok()) << s << ": " << t.status().message();
    EXPECT_EQ((*t)->spec(), s);
  }
  auto t = ParseTopology("torus:4x4x4x8x2");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->num_nodes(), 1024);
}

TEST(TopologySpecTest, RejectsMalformed) {
  for (const char* s : {"", "torus:", "torus:4x", "torus:4xx4", "torus:-4", "torus:4x4:order=AA",
                        "torus:4x4:order=A", "torus:4x4:foo=1", "fattree:4x4", "mesh:4x4",
                        "torus:4x4:order=ab", "torus:4a", "dragonfly:9x4x2", "dragonfly:10x4x2x2",
                        "dragonfly:9x4x2x2:routing=ugal", "dragonfly:0x4x2x2"}) {
    EXPECT_FALSE(ParseTopology(s).ok()) << s;
  }
}

}  // namespace
}  // namespace iorelay::placement
