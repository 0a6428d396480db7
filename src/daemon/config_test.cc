// Command-line and JSON configuration: defaults, repeatable options, errors.
#include "daemon/config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace iorelay::daemon {
namespace {

Result<CommandLine> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "iorelayd");
  return ParseCommandLine(static_cast<int>(args.size()), args.data());
}

TEST(Config, DefaultsFilledIn) {
  auto cl = Parse({});
  ASSERT_TRUE(cl.ok());
  nlohmann::json j = ConfigToJson(cl->config);
  EXPECT_EQ(j["listen"][0], "tcp:127.0.0.1:0");
  EXPECT_EQ(j["workers"], 4);
  EXPECT_EQ(j["scheduler"], "fifo");
  EXPECT_EQ(j["backend"], "posix");
  EXPECT_EQ(j["heartbeat-ms"], 200);
}

TEST(Config, RepeatableOptions) {
  auto cl = Parse({"--listen", "unix:/tmp/a", "--listen", "tcp:0.0.0.0:7000", "--export",
                   "/scratch=/tmp/x", "--credential", "a=/k1", "--credential", "b=/k2", "--workers",
                   "8", "--print-config"});
  ASSERT_TRUE(cl.ok()) << cl.status().ToString();
  EXPECT_TRUE(cl->print_config);
  EXPECT_EQ(cl->config.listen.size(), 2u);
  EXPECT_EQ(cl->config.credentials.size(), 2u);
  EXPECT_EQ(cl->config.exports[0].first, "/scratch");
  EXPECT_EQ(cl->config.workers, 8);
}

TEST(Config, ListenPortsOutOfRangeAreRefused) {
  for (const char* ok : {"tcp:127.0.0.1:0", "tcp:[::1]:65535", "tcp::7000", "unix:/tmp/a"}) {
    EXPECT_TRUE(Parse({"--listen", ok}).ok()) << ok;
  }
  for (const char* bad : {"tcp:127.0.0.1:99999", "tcp:127.0.0.1:65536",
                          "tcp:127.0.0.1:", "tcp:127.0.0.1:http", "tcp:7000", "tcp:h:-1"}) {
    auto cl = Parse({"--listen", bad});
    ASSERT_FALSE(cl.ok()) << bad;
    EXPECT_NE(cl.status().message().find("port"), std::string::npos) << cl.status().message();
  }
}

TEST(Config, SealIsOnUnlessTurnedOff) {
  auto defaults = Parse({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->config.seal);
  EXPECT_EQ(ConfigToJson(defaults->config)["seal"], "on");
  auto off = Parse({"--seal", "off"});
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->config.seal);
  Result<Config> back = ConfigFromJson(ConfigToJson(off->config));
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->seal);
  auto bad = Parse({"--seal", "maybe"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("on|off"), std::string::npos) << bad.status().message();
}

TEST(Config, ConnectionLimits) {
  auto defaults = Parse({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->config.io_threads, 2);
  EXPECT_EQ(defaults->config.min_send_rate, 1u << 20);
  auto cl = Parse({"--io-threads", "3", "--max-connections", "50", "--min-send-rate", "200Mbps",
                   "--send-window-ms", "2000", "--max-inflight-bytes", "64MiB",
                   "--shutdown-timeout-ms", "500"});
  ASSERT_TRUE(cl.ok()) << cl.status().ToString();
  const Config& c = cl->config;
  EXPECT_EQ(c.io_threads, 3);
  EXPECT_EQ(c.max_connections, 50);
  EXPECT_EQ(c.min_send_rate, 25'000'000u);
  EXPECT_EQ(c.send_window_ms, 2000);
  EXPECT_EQ(c.max_inflight_bytes, 64u << 20);
  EXPECT_EQ(c.shutdown_timeout_ms, 500);
  Result<Config> back = ConfigFromJson(ConfigToJson(c));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->min_send_rate, 25'000'000u);
  EXPECT_EQ(back->max_inflight_bytes, 64u << 20);
  EXPECT_FALSE(Parse({"--io-threads", "0"}).ok());
  EXPECT_FALSE(Parse({"--min-send-rate", "fast"}).ok());
}

TEST(Config, BadArgumentsAreEinval) {
  EXPECT_EQ(Parse({"--workers", "zero"}).status().code(), EINVAL);
  EXPECT_EQ(Parse({"--export", "noequals"}).status().code(), EINVAL);
  EXPECT_EQ(Parse({"--listen", "udp:x"}).status().code(), EINVAL);
  EXPECT_EQ(Parse({"--bogus"}).status().code(), EINVAL);
  EXPECT_EQ(Parse({"--trace"}).status().code(), EINVAL);
}

TEST(Config, JsonRoundTripAndFileOverride) {
  Config c;
  c.listen = {"unix:/tmp/s"};
  c.exports = {{"/p", "/r"}};
  c.credentials = {{"app", "/k"}};
  c.workers = 3;
  Result<Config> back = ConfigFromJson(ConfigToJson(c));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(ConfigToJson(*back), ConfigToJson(c));
  std::string path = "/tmp/iorelay-config-test.json";
  std::ofstream(path) << ConfigToJson(c).dump();
  auto cl = Parse({"--config", path.c_str(), "--workers", "5"});
  std::remove(path.c_str());
  ASSERT_TRUE(cl.ok());
  EXPECT_EQ(cl->config.workers, 5);
  EXPECT_EQ(cl->config.listen[0], "unix:/tmp/s");
  EXPECT_EQ(ConfigFromJson(nlohmann::json{{"nope", 1}}).status().code(), EINVAL);
}

TEST(Config, CredentialWeights) {
  auto cl = Parse({"--credential", "a=/k1:weight=3", "--credential", "b=/k2"});
  ASSERT_TRUE(cl.ok()) << cl.status().ToString();
  ASSERT_EQ(cl->config.credentials.size(), 2u);
  EXPECT_EQ(cl->config.credentials[0].file, "/k1");
  EXPECT_EQ(cl->config.credentials[0].weight, 3u);
  EXPECT_EQ(cl->config.credentials[1].weight, 1u);
  Result<Config> back = ConfigFromJson(ConfigToJson(cl->config));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->credentials[0].weight, 3u);
  EXPECT_EQ(Parse({"--credential", "a=/k:weight=0"}).status().code(), EINVAL);
  EXPECT_EQ(Parse({"--credential", "a=:weight=2"}).status().code(), EINVAL);
}

TEST(Config, SchedulerReadsBackAsJsonObject) {
  Result<Config> c = ConfigFromJson(nlohmann::json{{"scheduler", {{"name", "wfq"}}}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(nlohmann::json::parse(c->scheduler)["name"], "wfq");
}

}  // namespace
}  // namespace iorelay::daemon
