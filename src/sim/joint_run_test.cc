// Several jobs in one simulation: one job alone is the run of one job to the last bit, two jobs
// on one storage slow each other and keep their own bytes, and bad input is refused. Each run
// in a forked child (one SimGrid engine per process).
#include "sim/joint_run.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/platform.h"
#include "sim/simulation.h"
#include "testutil/forked_json_testutil.h"

namespace iorelay::sim {
namespace {

using nlohmann::json;

Platform TestPlatform() {
  const json doc = {{"name", "test-joint"},
                    {"network", {{"latency", "2us"}}},
                    {"compute", {{"nic", "10Gbps"}, {"start_jitter", "10us"}}},
                    {"ionode", {{"nic", "10Gbps"}, {"slots", 4}}},
                    {"storage",
                     {{"kind", "pfs"},
                      {"nic", "10Gbps"},
                      {"device", "hdd"},
                      {"targets", 2},
                      {"stripe_size", "64KiB"},
                      {"stripe_count", 2}}}};
  auto p = ParsePlatform(doc);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return *p;
}

JointJob Job(int ionodes, Layout layout) {
  JointJob job;
  job.pattern.layout = layout;
  job.pattern.spatiality = Spatiality::kStrided;
  job.pattern.request_bytes = 64 * 1024;
  job.pattern.segments = 8;
  job.pattern.ranks = 8;
  job.pattern.nodes = 4;
  job.ionodes = ionodes;
  return job;
}

JointConfig Joint(std::vector<JointJob> jobs) {
  JointConfig c;
  c.platform = TestPlatform();
  c.jobs = std::move(jobs);
  c.seed = 3;
  c.context_factory = "thread";  // as simulation_test: sanitizers cannot follow raw contexts
  return c;
}

json RunJointForked(const JointConfig& config) {
  return testutil::ForkedJson([&] {
    auto r = RunJoint(config);
    return r.ok() ? JointJson(config, *r).dump() : json{{"error", r.status().message()}}.dump();
  });
}

json RunAloneForked(const JointJob& job) {
  RunConfig c;
  c.platform = TestPlatform();
  c.pattern = job.pattern;
  c.ionodes = job.ionodes;
  c.seed = 3;
  c.context_factory = "thread";
  return testutil::ForkedJson([&] {
    auto r = Run(c);
    return r.ok() ? DeterministicJson(c, *r).dump() : json{{"error", r.status().message()}}.dump();
  });
}

TEST(JointRunTest, OneJobAloneIsTheRunOfOneJob) {
  for (int ionodes : {0, 2}) {
    const JointJob job = Job(ionodes, Layout::kShared);
    const json joint = RunJointForked(Joint({job}));
    const json alone = RunAloneForked(job);
    ASSERT_FALSE(joint.contains("error")) << joint.dump();
    ASSERT_FALSE(alone.contains("error")) << alone.dump();
    const json& j = joint["jobs"][0];
    EXPECT_EQ(j["bytes"], alone["bytes"]) << ionodes;
    EXPECT_EQ(j["requests"], alone["requests"]) << ionodes;
    EXPECT_DOUBLE_EQ(j["end_s"].get<double>(), alone["simulated_time_s"].get<double>()) << ionodes;
  }
}

TEST(JointRunTest, TwoJobsOnOneStorageSlowEachOtherAndKeepTheirBytes) {
  const JointJob a = Job(1, Layout::kShared);
  JointJob b = Job(0, Layout::kFilePerProcess);
  b.pattern.spatiality = Spatiality::kContiguous;  // file per process is contiguous only
  b.pattern.segments = 0;
  b.pattern.block_bytes = 8 * 64 * 1024;  // one segment of 8 requests: as many bytes as a
  b.start_s = 0.001;
  const json joint = RunJointForked(Joint({a, b}));
  ASSERT_FALSE(joint.contains("error")) << joint.dump();
  const json alone_a = RunAloneForked(a);
  const json alone_b = RunAloneForked(b);
  const uint64_t bytes = 8 * 8 * 64 * 1024;
  EXPECT_EQ(joint["jobs"][0]["bytes"], bytes);
  EXPECT_EQ(joint["jobs"][1]["bytes"], bytes);
  EXPECT_DOUBLE_EQ(joint["jobs"][1]["start_s"].get<double>(), 0.001);
  // Both write to the same two targets at once: each takes longer than alone.
  EXPECT_LT(joint["jobs"][0]["bandwidth_MiBps"].get<double>(),
            alone_a["bandwidth_MiBps"].get<double>());
  EXPECT_LT(joint["jobs"][1]["bandwidth_MiBps"].get<double>(),
            alone_b["bandwidth_MiBps"].get<double>());
}

TEST(JointRunTest, BadInputIsRefused) {
  EXPECT_FALSE(RunJoint(Joint({})).ok());
  JointConfig topology = Joint({Job(1, Layout::kShared)});
  topology.platform.network.topology = "torus:4x4x4";
  topology.platform.network.link_Bps = 1e9;
  auto r = RunJoint(topology);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("star network"), std::string::npos);
  auto unknown = ParseJointConfig(json{{"platform", "x.json"}, {"jobs", {{{"colour", 1}}}}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown job key colour"), std::string::npos);
}

}  // namespace
}  // namespace iorelay::sim
