// The job table: one credential and one name per job, application ids never reused, revocation
// and leases; and a departed job's counters, listed once more, then folded into the total.
#include "daemon/jobs.h"

#include <gtest/gtest.h>

#include "daemon/stats.h"

namespace iorelay::daemon {
namespace {

Job::Spec SpecOf(const std::string& name, uint8_t fill, int64_t lease_ns = 0) {
  Job::Spec s;
  s.name = name;
  s.secret.fill(fill);
  s.exports = std::make_shared<Exports>();
  s.lease_ns = lease_ns;
  return s;
}

std::shared_ptr<AppStats> NewStats(uint32_t) { return std::make_shared<AppStats>("x"); }

TEST(JobTableTest, OneNameAndOneCredentialPerJob) {
  JobTable t;
  ASSERT_TRUE(t.Admit(SpecOf("a", 1), NewStats, 0).ok());
  Result<JobPtr> same_name = t.Admit(SpecOf("a", 2), NewStats, 0);
  EXPECT_EQ(same_name.status().code(), EEXIST);
  Result<JobPtr> same_key = t.Admit(SpecOf("b", 1), NewStats, 0);
  EXPECT_EQ(same_key.status().code(), EEXIST);
  Secret s;
  s.fill(1);
  ASSERT_NE(t.FindByKey(KeyIdOf(s)), nullptr);
  EXPECT_EQ(t.FindByKey(KeyIdOf(s))->name(), "a");
  s.fill(9);
  EXPECT_EQ(t.FindByKey(KeyIdOf(s)), nullptr);
}

TEST(JobTableTest, ApplicationIdsAreNeverReused) {
  JobTable t;
  Result<JobPtr> a = t.Admit(SpecOf("a", 1), NewStats, 0);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(t.Revoke("a").ok());
  EXPECT_TRUE((*a)->revoked());
  EXPECT_EQ(t.Find("a"), nullptr);
  Result<JobPtr> again = t.Admit(SpecOf("a", 1), NewStats, 0);  // same name and key, later
  ASSERT_TRUE(again.ok());
  EXPECT_NE((*again)->app(), (*a)->app());
  EXPECT_EQ(t.Revoke("nobody").status().code(), ENOENT);
}

TEST(JobTableTest, ALeaseRunsOutUnlessRenewed) {
  JobTable t;
  constexpr int64_t kSecond = 1'000'000'000;
  ASSERT_TRUE(t.Admit(SpecOf("leased", 1, kSecond), NewStats, 0).ok());
  ASSERT_TRUE(t.Admit(SpecOf("forever", 2), NewStats, 0).ok());
  EXPECT_TRUE(t.RevokeExpired(kSecond / 2).empty());
  Result<int64_t> renewed = t.Renew("leased", 0, kSecond / 2);  // runs to 1.5 s
  ASSERT_TRUE(renewed.ok());
  EXPECT_EQ(*renewed, kSecond);
  EXPECT_TRUE(t.RevokeExpired(kSecond).empty());
  std::vector<JobPtr> gone = t.RevokeExpired(kSecond * 3 / 2);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0]->name(), "leased");
  EXPECT_TRUE(gone[0]->revoked());
  EXPECT_EQ(t.Renew("forever", 0, 0).status().code(), EINVAL);  // no lease to renew
  EXPECT_EQ(t.Renew("leased", 0, 0).status().code(), ENOENT);
}

TEST(JobTableTest, SharesAreTakenAndGivenBack) {
  JobTable t;
  Job::Spec spec = SpecOf("a", 1);
  spec.shares.max_connections = 2;
  spec.shares.max_open_files = 1;
  Result<JobPtr> a = t.Admit(std::move(spec), NewStats, 0);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE((*a)->TakeConnection());
  EXPECT_TRUE((*a)->TakeConnection());
  EXPECT_FALSE((*a)->TakeConnection());
  (*a)->GiveConnection();
  EXPECT_TRUE((*a)->TakeConnection());
  EXPECT_TRUE((*a)->TakeFile());
  EXPECT_FALSE((*a)->TakeFile());
  EXPECT_EQ((*a)->files(), 1u);
}

TEST(JobTableTest, ReleaseRefusesNewConnectionsThenRemoves) {
  JobTable t;
  ASSERT_TRUE(t.Admit(SpecOf("a", 1), NewStats, 0).ok());
  Result<JobPtr> r = t.BeginRelease("a");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE((*r)->accepting());
  EXPECT_EQ(t.BeginRelease("a").status().code(), EALREADY);
  t.Remove(*r);
  EXPECT_EQ(t.Find("a"), nullptr);
  EXPECT_TRUE((*r)->revoked());
}

TEST(StatsTest, ADepartedJobIsListedOnceMoreThenStaysInTheTotal) {
  Stats stats;
  std::shared_ptr<AppStats> a = stats.AddApp(7, "a");
  Stats::Record(a.get(), Family::kWrite, 0, 0, 4096, 0, 10);
  stats.DepartApp(7);
  nlohmann::json first = stats.ToJson();
  EXPECT_EQ(first["apps"]["a"]["departed"], true);
  EXPECT_EQ(first["apps"]["a"]["bytes_written"], 4096);
  nlohmann::json second = stats.ToJson();
  EXPECT_FALSE(second["apps"].contains("a"));
  EXPECT_EQ(second["total"]["bytes_written"], 4096);
  EXPECT_EQ(second["total"]["requests"], 1);
  EXPECT_EQ(second["total"]["departed_apps"], 1);
}

TEST(StatsTest, AJobsViewHoldsItsOwnCountersOnly) {
  Stats stats;
  std::shared_ptr<AppStats> a = stats.AddApp(3, "a");
  std::shared_ptr<AppStats> b = stats.AddApp(4, "b");
  Stats::Record(a.get(), Family::kWrite, 0, 0, 100, 0, 10);
  Stats::Record(b.get(), Family::kWrite, 0, 0, 7000, 0, 10);
  Stats::Record(b.get(), Family::kRead, 0, 5000, 0, 0, 10);
  stats.RecordFileDispatch(1, 2, 1, 7000);
  stats.DepartApp(4);
  nlohmann::json view = stats.ToJsonOf(3);
  EXPECT_EQ(view["apps"].size(), 1u);
  EXPECT_EQ(view["apps"]["a"]["bytes_written"], 100);
  EXPECT_EQ(view["total"]["bytes_written"], 100);
  EXPECT_EQ(view["total"]["bytes_read"], 0);
  EXPECT_EQ(view["total"]["requests"], 1);
  EXPECT_FALSE(view.contains("files"));
  EXPECT_FALSE(view["total"].contains("by_op"));
  // Job a's look consumed nothing: b's departed counters are still listed once for the admin.
  EXPECT_EQ(stats.ToJson()["apps"]["b"]["departed"], true);
  EXPECT_EQ(stats.ToJsonOf(4)["apps"].size(), 0u);  // gone
}

}  // namespace
}  // namespace iorelay::daemon
