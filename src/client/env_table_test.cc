// The environment table: a row per id in order, every checked variable's bad value is an error
// naming it, and docs/interposer.md's table is the table's.
#include "client/env_table.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "testutil/docs_section_testutil.h"

namespace iorelay::client {
namespace {

TEST(EnvTable, OneRowPerIdInOrderAndNamesUnique) {
  const std::vector<EnvVar>& table = EnvTable();
  ASSERT_EQ(table.size(), static_cast<size_t>(EnvVarId::kInheritFds) + 1);
  std::set<std::string> names;
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(table[i].id), i) << table[i].name;
    EXPECT_EQ(table[i].name.rfind("IORELAY_", 0), 0u) << table[i].name;
    EXPECT_TRUE(names.insert(table[i].name).second) << table[i].name;
    EXPECT_FALSE(table[i].meaning.empty()) << table[i].name;
    EXPECT_NE(table[i].apply == nullptr, table[i].read_by.empty()) << table[i].name;
  }
  EXPECT_EQ(Env(EnvVarId::kShm).name, "IORELAY_SHM");
}

TEST(EnvTable, EveryCheckedVariableRejectsGarbageByName) {
  for (const EnvVar& var : EnvTable()) {
    if (!var.apply || var.id == EnvVarId::kSecretFile) continue;  // a path may be anything
    std::map<std::string, std::string> env = {{"IORELAY_SERVERS", "unix:/tmp/a.sock"},
                                              {"IORELAY_SECRET_FILE", "/tmp/secret"}};
    env[var.name] = "?garbage";
    Result<ClientConfig> got = ParseConfig([&](const char* name) -> const char* {
      auto it = env.find(name);
      return it == env.end() ? nullptr : it->second.c_str();
    });
    EXPECT_EQ(got.status().code(), EINVAL) << var.name;
    EXPECT_NE(got.status().message().find(var.name), std::string::npos) << got.status().message();
  }
}

TEST(EnvTable, NumbersAndChoicesAreCheckedByTheirRow) {
  ParsedEnv env;
  EXPECT_EQ(Env(EnvVarId::kTimeoutMs).apply("0", &env).message(),
            "IORELAY_TIMEOUT_MS must be >= 1");
  EXPECT_EQ(Env(EnvVarId::kSpinUs).apply("10001", &env).message(),
            "IORELAY_SPIN_US='10001' is not a valid number");
  EXPECT_EQ(Env(EnvVarId::kFallback).apply("retry", &env).message(),
            "IORELAY_FALLBACK must be eio or direct, not 'retry'");
  EXPECT_EQ(Env(EnvVarId::kSeal).apply("yes", &env).message(),
            "IORELAY_SEAL must be on or off, not 'yes'");
  EXPECT_TRUE(Env(EnvVarId::kMaxConnections).apply("0", &env).ok());
  EXPECT_EQ(env.cfg.max_connections, 1);  // 0 counts as 1
  EXPECT_EQ(Env(EnvVarId::kSpinUs).values, "integer 0..10000");
}

TEST(EnvTable, DocsTableIsTheTable) {
  const std::string docs =
      testutil::DocsSection(IORELAY_SOURCE_DIR "/docs/interposer.md", "environment");
  EXPECT_EQ(docs, EnvMarkdown())
      << "docs/interposer.md's table between the environment markers should read:\n"
      << EnvMarkdown();
}

TEST(EnvTable, ListingNamesEveryVariable) {
  const std::string listing = EnvListing();
  for (const EnvVar& var : EnvTable()) {
    EXPECT_NE(listing.find("\n" + var.name + "  "), std::string::npos) << var.name;
  }
}

}  // namespace
}  // namespace iorelay::client
