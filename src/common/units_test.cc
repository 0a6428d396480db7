// The units rule: every case of tests/data/units_cases.json (shared with the Python twin), and
// formatting that parses back.
#include "common/units.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace iorelay::units {
namespace {

TEST(UnitsTest, SharedCases) {
  std::ifstream in(UNITS_CASES);
  ASSERT_TRUE(in) << UNITS_CASES;
  const nlohmann::json cases = nlohmann::json::parse(in)["cases"];
  ASSERT_GE(cases.size(), 100u);
  for (const nlohmann::json& c : cases) {
    const std::string kind = c["kind"], text = c["text"];
    const bool error = c.value("error", false);
    SCOPED_TRACE(kind + " '" + text + "'");
    if (kind == "size") {
      Result<uint64_t> r = ParseBytes(text);
      ASSERT_EQ(r.ok(), !error) << (r.ok() ? std::to_string(*r) : r.status().ToString());
      if (!error) {
        EXPECT_EQ(*r, c["value"].get<uint64_t>());
      }
    } else if (kind == "duration") {
      Result<int64_t> r = ParseDurationNs(text);
      ASSERT_EQ(r.ok(), !error) << (r.ok() ? std::to_string(*r) : r.status().ToString());
      if (!error) {
        EXPECT_EQ(*r, c["value"].get<int64_t>());
      }
    } else if (kind == "rate") {
      Result<double> r = ParseBytesPerSecond(text);
      ASSERT_EQ(r.ok(), !error) << (r.ok() ? std::to_string(*r) : r.status().ToString());
      if (!error) {
        EXPECT_DOUBLE_EQ(*r, c["value"].get<double>());
      }
    } else {
      FAIL() << "unknown kind";
    }
  }
}

TEST(UnitsTest, ErrorsNameTheAcceptedForms) {
  Status s = ParseBytes("12 parsecs").status();
  EXPECT_EQ(s.code(), EINVAL);
  EXPECT_NE(s.message().find("KiB"), std::string::npos) << s.message();
  EXPECT_NE(ParseBytesPerSecond("10Gbit/s").status().message().find("10Gbps"), std::string::npos);
  EXPECT_NE(ParseDurationNs("5").status().message().find("ms"), std::string::npos);
}

TEST(UnitsTest, FormattingParsesBack) {
  for (uint64_t b : {0ull, 1ull, 1000ull, 1024ull, 65536ull, 3ull << 30, (1ull << 40) + 1}) {
    EXPECT_EQ(*ParseBytes(FormatBytes(b)), b) << FormatBytes(b);
  }
  for (int64_t ns :
       {int64_t{0}, int64_t{1}, int64_t{1500}, int64_t{900'000}, int64_t{2'000'000'000}}) {
    EXPECT_EQ(*ParseDurationNs(FormatDurationNs(ns)), ns) << FormatDurationNs(ns);
  }
}

}  // namespace
}  // namespace iorelay::units
