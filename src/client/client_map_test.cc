// A pool job's client (IORELAY_MAP_FILE) places paths among the daemons its map names, takes a
// newer map when it re-reads it, and keeps its lock daemon. No daemon is contacted: the
// client connects lazily, and these are its routing decisions.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>

#include "client/client.h"
#include "client/placement.h"
#include "common/auth.h"

namespace iorelay::client {
namespace {

class ClientMap : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/iorelay-map-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_TRUE(CreateSecretFile(dir_ + "/key").ok());
  }
  void TearDown() override {
    ::unlink((dir_ + "/key").c_str());
    ::unlink((dir_ + "/map").c_str());
    ::rmdir(dir_.c_str());
  }
  void WriteMap(const std::string& json) { std::ofstream(dir_ + "/map") << json; }
  std::unique_ptr<Client> Make() {
    ClientConfig cfg;
    for (int i = 0; i < 4; ++i) {
      Result<Address> a = ParseAddress("unix:" + dir_ + "/d" + std::to_string(i) + ".sock");
      EXPECT_TRUE(a.ok());
      cfg.servers.push_back(*a);
    }
    cfg.secret_file = dir_ + "/key";
    cfg.prefixes = {"/fwd"};
    cfg.placement.kind = PlacementKind::kFileHash;
    cfg.map_file = dir_ + "/map";
    Result<std::unique_ptr<Client>> c = Client::Create(std::move(cfg));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }
  std::set<int> Placed(Client& c) {
    std::set<int> out;
    for (int i = 0; i < 200; ++i) out.insert(c.ServerFor("/fwd/f" + std::to_string(i)));
    return out;
  }
  std::string dir_;
};

TEST_F(ClientMap, PlacesAmongTheMapsDaemonsAndFollowsANewerEpoch) {
  WriteMap(R"({"epoch": 3, "active": [1], "locks": 1})");
  std::unique_ptr<Client> c = Make();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Placed(*c), (std::set<int>{1}));
  EXPECT_FALSE(c->IsActive(0));
  EXPECT_EQ(c->LockServer(7, 42), 1);
  WriteMap(R"({"epoch": 4, "active": [1, 3], "locks": 1})");
  c->RefreshMap(/*force=*/true);
  EXPECT_EQ(c->map_epoch(), 4u);
  EXPECT_EQ(Placed(*c), (std::set<int>{1, 3}));
  // As file-hash over the two, in index order.
  EXPECT_EQ(c->ServerFor("/fwd/f7"), PlaceFile("/fwd/f7", 2) == 0 ? 1 : 3);
  EXPECT_EQ(c->LockServer(7, 42), 1);  // fixed whatever moves
  // An older epoch, or a map that does not parse, changes nothing.
  WriteMap(R"({"epoch": 2, "active": [0]})");
  c->RefreshMap(true);
  WriteMap("{not json");
  c->RefreshMap(true);
  EXPECT_EQ(c->map_epoch(), 4u);
  EXPECT_EQ(Placed(*c), (std::set<int>{1, 3}));
}

TEST_F(ClientMap, ADaemonTheMapDropsIsReplacedWithoutBeingDead) {
  WriteMap(R"({"epoch": 1, "active": [0, 2]})");
  std::unique_ptr<Client> c = Make();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->LockServer(1, 2), 0);  // no "locks": the first daemon at the start
  WriteMap(R"({"epoch": 2, "active": [2]})");
  EXPECT_EQ(c->ReplaceDead(0), 2);  // re-reads the map: 0 was released, not dead
  EXPECT_EQ(Placed(*c), (std::set<int>{2}));
  WriteMap(R"({"epoch": 3, "active": [0, 2]})");
  c->RefreshMap(true);
  EXPECT_EQ(Placed(*c), (std::set<int>{0, 2}));  // and may come back
}

TEST_F(ClientMap, AnUnusableMapAtTheStartIsAnError) {
  WriteMap(R"({"epoch": 1, "active": [4]})");  // 4 daemons: 0..3
  ClientConfig cfg;
  Result<Address> a = ParseAddress("unix:/tmp/x.sock");
  ASSERT_TRUE(a.ok());
  cfg.servers = {*a, *a, *a, *a};
  cfg.secret_file = dir_ + "/key";
  cfg.map_file = dir_ + "/map";
  Result<std::unique_ptr<Client>> c = Client::Create(std::move(cfg));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("indices in [0, 4)"), std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace iorelay::client
