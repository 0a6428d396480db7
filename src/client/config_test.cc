// Environment parsing: defaults, node identity from launchers, bad values rejected.
#include "client/config.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

namespace iorelay::client {
namespace {

Result<ClientConfig> Parse(std::map<std::string, std::string> env) {
  return ParseConfig([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::map<std::string, std::string> Base() {
  return {{"IORELAY_SERVERS", "unix:/tmp/a.sock,tcp:127.0.0.1:7000"},
          {"IORELAY_SECRET_FILE", "/tmp/secret"}};
}

TEST(Config, Defaults) {
  Result<ClientConfig> c = Parse(Base());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->servers.size(), 2u);
  EXPECT_EQ(c->servers[0].kind, Address::Kind::kUnix);
  EXPECT_EQ(c->servers[1].host, "127.0.0.1");
  EXPECT_EQ(c->servers[1].port, 7000);
  EXPECT_EQ(c->timeout_ms, 5000);
  EXPECT_EQ(c->fallback, Fallback::kEio);
  EXPECT_EQ(c->node_id, 0u);
  EXPECT_EQ(c->nodes, 1u);
  EXPECT_EQ(c->placement.kind, PlacementKind::kBlock);
  EXPECT_EQ(c->spin_us, 50);
}

TEST(Config, AbstractUnixAddress) {
  auto e = Base();
  e["IORELAY_SERVERS"] = "unix:@iorelay-relay-42";
  Result<ClientConfig> c = Parse(e);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->servers[0].kind, Address::Kind::kUnix);
  EXPECT_EQ(c->servers[0].path, "@iorelay-relay-42");
}

TEST(Config, ShmSpin) {
  for (auto [v, want] : std::vector<std::pair<std::string, int>>{{"0", 0}, {"200", 200}}) {
    auto e = Base();
    e["IORELAY_SPIN_US"] = v;
    Result<ClientConfig> c = Parse(e);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->spin_us, want);
  }
}

// Sealing and failover are on unless switched off by name; anything else is an error naming
// the variable.
TEST(Config, OnOffSwitches) {
  Result<ClientConfig> d = Parse(Base());
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->seal);
  EXPECT_TRUE(d->failover);
  for (const char* name : {"IORELAY_SEAL", "IORELAY_FAILOVER"}) {
    auto e = Base();
    e[name] = "off";
    Result<ClientConfig> off = Parse(e);
    ASSERT_TRUE(off.ok());
    EXPECT_FALSE(std::string(name) == "IORELAY_SEAL" ? off->seal : off->failover) << name;
    e[name] = "maybe";
    Result<ClientConfig> bad = Parse(e);
    EXPECT_EQ(bad.status().code(), EINVAL) << name;
    EXPECT_NE(bad.status().message().find(name), std::string::npos) << bad.status().message();
  }
}

TEST(Config, MissingOrBadValues) {
  EXPECT_EQ(Parse({}).status().code(), EINVAL);
  auto e = Base();
  e.erase("IORELAY_SECRET_FILE");
  EXPECT_EQ(Parse(e).status().code(), EINVAL);
  // (A list, not a map: several values of one variable.)
  for (auto [k, v] :
       std::vector<std::pair<std::string, std::string>>{{"IORELAY_SERVERS", "http://x"},
                                                        {"IORELAY_SERVERS", "tcp:host"},
                                                        {"IORELAY_SERVERS", "unix:rel"},
                                                        {"IORELAY_SERVERS", "unix:@"},
                                                        {"IORELAY_TIMEOUT_MS", "0"},
                                                        {"IORELAY_TIMEOUT_MS", "12x"},
                                                        {"IORELAY_FALLBACK", "retry"},
                                                        {"IORELAY_PLACEMENT", "random"},
                                                        {"IORELAY_PREFIX", "rel/path"},
                                                        {"IORELAY_DIRECT_ROOT", "/fwd"},
                                                        {"IORELAY_SPIN_US", "-1"},
                                                        {"IORELAY_SPIN_US", "10001"},
                                                        {"IORELAY_SPIN_US", "fast"}}) {
    auto bad = Base();
    bad[k] = v;
    Result<ClientConfig> got = Parse(bad);
    EXPECT_EQ(got.status().code(), EINVAL) << k << "=" << v;
    // The message names the variable, which is all the interposer can print before it goes
    // inert.
    EXPECT_NE(got.status().message().find(k), std::string::npos) << got.status().message();
  }
}

TEST(Config, NodeIdentityFromLaunchers) {
  auto e = Base();
  e["OMPI_COMM_WORLD_RANK"] = "13";
  e["OMPI_COMM_WORLD_SIZE"] = "16";
  e["IORELAY_RANKS_PER_NODE"] = "4";
  Result<ClientConfig> c = Parse(e);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->node_id, 3u);
  EXPECT_EQ(c->nodes, 4u);
  e["IORELAY_NODE_ID"] = "1";
  e["IORELAY_NODES"] = "2";
  c = Parse(e);
  EXPECT_EQ(c->node_id, 1u);
  EXPECT_EQ(c->nodes, 2u);
  auto s = Base();
  s["SLURM_PROCID"] = "5";
  s["SLURM_NTASKS"] = "6";
  EXPECT_EQ(Parse(s)->node_id, 5u);
  EXPECT_EQ(Parse(s)->nodes, 6u);
}

TEST(Config, PrefixesAndDirectRoots) {
  auto e = Base();
  e["IORELAY_PREFIX"] = "/fwd/:/scratch";
  e["IORELAY_FALLBACK"] = "direct";
  e["IORELAY_DIRECT_ROOT"] = "/fwd=/data/real:/scratch=/s2/";
  Result<ClientConfig> c = Parse(e);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->prefixes, (std::vector<std::string>{"/fwd", "/scratch"}));
  EXPECT_EQ(DirectPath(*c, "/fwd/a/b"), "/data/real/a/b");
  EXPECT_EQ(DirectPath(*c, "/scratch"), "/s2");
  EXPECT_EQ(DirectPath(*c, "/fwdx/a"), "/fwdx/a");
  EXPECT_TRUE(PathUnder("/fwd/a", "/fwd"));
  EXPECT_TRUE(PathUnder("/fwd", "/fwd"));
  EXPECT_FALSE(PathUnder("/fwdx", "/fwd"));
  EXPECT_TRUE(PathUnder("/anything", "/"));
}

}  // namespace
}  // namespace iorelay::client
