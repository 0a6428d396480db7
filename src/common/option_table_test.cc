// The option table: parsing forms, --config then the command line, lists replaced, JSON
// round trip, errors naming the option, and help generated from the rows.
#include "common/option_table.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace iorelay::cli {
namespace {

enum class Mode { kFast, kSafe };

struct Fields {
  bool verbose = false;
  std::string name = "x";
  int count = 4;
  uint64_t size = 65536;
  double seconds = 0;
  Mode mode = Mode::kSafe;
  std::vector<std::string> hosts;
};

OptionTable MakeTable(Fields* f) {
  OptionTable t("usage: tool [options] FILE", "Exit status: 0 ok.");
  t.Add(Flag("verbose", &f->verbose, "say more"))
      .Add(Text("name", "NAME", &f->name, "a name (x)"))
      .Add(Integer("count", "N", &f->count, 1, 10, "how many (4)"))
      .Add(Bytes("size", "SIZE", &f->size, "bytes (64K)"))
      .Add(Seconds("wait", "S", &f->seconds, "seconds (0)"))
      .Add(Choice("mode", &f->mode, {{"fast", Mode::kFast}, {"safe", Mode::kSafe}}, "mode"))
      .Add(TextList("host", "H", &f->hosts, nullptr, "a host\nsecond line of help"));
  return t;
}

TEST(OptionTable, ParsesEveryForm) {
  Fields f;
  OptionTable t = MakeTable(&f);
  Result<ParseOutcome> r =
      t.Parse({"--verbose", "--name=abc", "--count", "7", "--size", "1M", "--wait", "1.5", "--mode",
               "fast", "--host", "a", "--host=b", "file", "--print-config"},
              1);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(f.verbose);
  EXPECT_EQ(f.name, "abc");
  EXPECT_EQ(f.count, 7);
  EXPECT_EQ(f.size, 1u << 20);
  EXPECT_EQ(f.seconds, 1.5);
  EXPECT_EQ(f.mode, Mode::kFast);
  EXPECT_EQ(f.hosts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r->positionals, std::vector<std::string>{"file"});
  EXPECT_TRUE(r->print_config);
  EXPECT_FALSE(r->help);
}

TEST(OptionTable, ErrorsNameTheOption) {
  Fields f;
  OptionTable t = MakeTable(&f);
  auto message = [&](std::vector<std::string> args) {
    Result<ParseOutcome> r = t.Parse(args);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), EINVAL);
    return r.status().message();
  };
  EXPECT_NE(message({"--count", "11"}).find("--count"), std::string::npos);
  EXPECT_NE(message({"--count"}).find("needs a value"), std::string::npos);
  EXPECT_NE(message({"--mode", "slow"}).find("fast|safe"), std::string::npos);
  EXPECT_NE(message({"--size", "lots"}).find("--size"), std::string::npos);
  EXPECT_NE(message({"--bogus"}).find("unknown option '--bogus'"), std::string::npos);
  EXPECT_NE(message({"-x"}).find("unknown option '-x'"), std::string::npos);
  EXPECT_NE(message({"stray"}).find("unexpected argument"), std::string::npos);
  EXPECT_NE(message({"--verbose=1"}).find("takes no value"), std::string::npos);
}

TEST(OptionTable, PrintConfigRoundTripsThroughConfigFile) {
  Fields f;
  OptionTable t = MakeTable(&f);
  ASSERT_TRUE(t.Parse({"--name", "n", "--count", "9", "--host", "h1", "--mode", "fast"}).ok());
  const nlohmann::json printed = t.ToJson();
  EXPECT_EQ(printed["count"], 9);
  EXPECT_EQ(printed["mode"], "fast");
  EXPECT_EQ(printed["host"], nlohmann::json::array({"h1"}));
  const std::string path = ::testing::TempDir() + "/option_table_test.json";
  std::ofstream(path) << printed.dump();

  Fields g;
  OptionTable back = MakeTable(&g);
  ASSERT_TRUE(back.Parse({"--config", path}).ok());
  EXPECT_EQ(back.ToJson(), printed);

  // The command line overrides the file, and a list given there replaces the file's list.
  Fields h;
  OptionTable over = MakeTable(&h);
  ASSERT_TRUE(over.Parse({"--count", "2", "--config", path, "--host", "h2", "--host", "h3"}).ok());
  EXPECT_EQ(h.count, 2);
  EXPECT_EQ(h.name, "n");
  EXPECT_EQ(h.hosts, (std::vector<std::string>{"h2", "h3"}));
  std::remove(path.c_str());
}

TEST(OptionTable, JsonErrorsNameTheKey) {
  Fields f;
  OptionTable t = MakeTable(&f);
  EXPECT_NE(t.FromJson({{"nope", 1}}).message().find("unknown config key 'nope'"),
            std::string::npos);
  EXPECT_NE(t.FromJson({{"count", 99}}).message().find("'count'"), std::string::npos);
  EXPECT_NE(t.FromJson({{"verbose", "yes"}}).message().find("true or false"), std::string::npos);
  EXPECT_NE(t.FromJson({{"host", "h"}}).message().find("array"), std::string::npos);
  EXPECT_FALSE(t.FromJson(nlohmann::json::array()).ok());
  EXPECT_FALSE(t.Parse({"--config", "/nonexistent/file.json"}).ok());
}

TEST(OptionTable, HelpListsEveryRowWithMetavarAndContinuationLines) {
  Fields f;
  const std::string help = MakeTable(&f).Help();
  EXPECT_EQ(help.rfind("usage: tool [options] FILE\n", 0), 0u);
  for (const char* entry : {"--verbose ", "--name NAME", "--count N", "--size SIZE", "--wait S",
                            "--mode fast|safe", "--host H", "--config FILE.json", "--print-config",
                            "--help", "--version", "Exit status: 0 ok."}) {
    EXPECT_NE(help.find(entry), std::string::npos) << entry;
  }
  EXPECT_NE(help.find("\n" + std::string(30, ' ') + "second line of help (repeatable)\n"),
            std::string::npos)
      << help;
}

}  // namespace
}  // namespace iorelay::cli
