// Units, scheduler specs, parameter defaults and errors, effective configuration.
#include "sched/params.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/units.h"
#include "sched/registry.h"

namespace iorelay::sched {
namespace {

TEST(Units, BytesDurationsBandwidth) {
  EXPECT_EQ(*units::ParseBytes("64KiB"), 65536u);
  EXPECT_EQ(*units::ParseBytes("4MiB"), 4u << 20);
  EXPECT_EQ(*units::ParseBytes("1.5KB"), 1500u);
  EXPECT_EQ(*units::ParseBytes("123"), 123u);
  EXPECT_FALSE(units::ParseBytes("12 parsecs").ok());
  EXPECT_FALSE(units::ParseBytes("").ok());
  EXPECT_EQ(*units::ParseDurationNs("0.9ms"), 900'000);
  EXPECT_EQ(*units::ParseDurationNs("1s"), 1'000'000'000);
  EXPECT_EQ(*units::ParseDurationNs("150us"), 150'000);
  EXPECT_DOUBLE_EQ(*units::ParseBytesPerSecond("100MBps"), 100e6);
  EXPECT_DOUBLE_EQ(*units::ParseBytesPerSecond("1GiB/s"), 1073741824.0);
  EXPECT_EQ(units::FormatBytes(65536), "64KiB");
  EXPECT_EQ(units::FormatBytes(1000), "1000B");
  EXPECT_EQ(units::FormatDurationNs(900'000), "900us");
}

TEST(SchedulerSpec, StringAndJson) {
  auto a = ParseSchedulerSpec("aioli:quantum=64KiB,max_quantum=4MiB");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->name, "aioli");
  EXPECT_EQ(a->params.at("quantum"), "64KiB");
  EXPECT_EQ(a->params.at("max_quantum"), "4MiB");
  auto j = ParseSchedulerSpec(R"({"name":"wfq","quantum":"32KiB","weights":{"3":2}})");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->name, "wfq");
  EXPECT_EQ(j->params.at("weight.3"), "2");
  EXPECT_FALSE(ParseSchedulerSpec("aioli:quantum").ok());
  EXPECT_FALSE(ParseSchedulerSpec("aioli:a=1,a=2").ok());
  EXPECT_FALSE(ParseSchedulerSpec("{\"quantum\":1}").ok());
}

TEST(SchedulerRegistry, EveryBuiltinPrintsItsEffectiveConfig) {
  SchedulerRegistry reg;
  RegisterBuiltinSchedulers(&reg);
  EXPECT_EQ(reg.Names().size(), 10u);
  for (const std::string& n : reg.Names()) {
    auto s = reg.Create(n);
    ASSERT_TRUE(s.ok()) << n << ": " << s.status().ToString();
    EXPECT_EQ((*s)->name(), n);
    nlohmann::json c = (*s)->EffectiveConfig();
    EXPECT_EQ(c["name"], n);
  }
  auto aioli = reg.CreateFromSpec("aioli:quantum=32KiB");
  ASSERT_TRUE(aioli.ok());
  nlohmann::json c = (*aioli)->EffectiveConfig();
  EXPECT_EQ(c["quantum"], "32KiB");
  EXPECT_EQ(c["max_quantum"], "4MiB");  // defaults filled in
  EXPECT_EQ(c["max_dispatch_bytes"], "4MiB");
  EXPECT_EQ(c["max_dispatch_requests"], 1024);
  EXPECT_EQ(c["wait"], "900us");
  EXPECT_EQ(c["sync"], true);
  // The printed configuration reads back as a spec.
  EXPECT_TRUE(reg.CreateFromSpec(c.dump()).ok()) << c.dump();
}

TEST(SchedulerRegistry, UnknownOrBadParametersAreErrors) {
  SchedulerRegistry reg;
  RegisterBuiltinSchedulers(&reg);
  auto unknown = reg.CreateFromSpec("aioli:quantom=64KiB");
  EXPECT_EQ(unknown.status().code(), EINVAL);
  EXPECT_NE(unknown.status().message().find("quantom"), std::string::npos);
  EXPECT_EQ(reg.CreateFromSpec("sjf:max_wait=soon").status().code(), EINVAL);
  EXPECT_EQ(reg.CreateFromSpec("twins:by=disk").status().code(), EINVAL);
  EXPECT_EQ(reg.CreateFromSpec("wfq:weight.1=0").status().code(), EINVAL);
  EXPECT_EQ(reg.CreateFromSpec("fifo:x=1").status().code(), EINVAL);
  EXPECT_EQ(reg.CreateFromSpec("dynamic:candidates=fifo+dynamic").status().code(), EINVAL);
}

}  // namespace
}  // namespace iorelay::sched
