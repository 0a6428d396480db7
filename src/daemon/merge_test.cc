// Merged dispatches through an in-process daemon: several sessions writing contiguous
// pieces of one file are served by fewer backend calls than requests, with the bytes a
// direct write gives; short counts split back per request; O_DIRECT alignment is checked
// per request; a scheduler's deliberate hold keeps heartbeats going.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "daemon/daemon.h"
#include "testutil/daemon_harness_testutil.h"
#include "testutil/raw_client_testutil.h"

namespace iorelay::daemon {
namespace {

using proto::Op;
using testing::Frame;
using testing::RawClient;

constexpr uint64_t kPiece = 8192;

class MergeTest : public ::testing::TestWithParam<std::string>, protected testing::DaemonHarness {
 protected:
  void SetUp() override { PrepareDirs(); }
  void TearDown() override { Cleanup(); }
  // One slot and a slow backend: requests arriving while a call runs queue in the
  // scheduler, which may merge them.
  void StartDaemon(const std::string& scheduler, int64_t delay_us, int heartbeat_ms = 200) {
    Config c = BaseConfig();
    c.credentials = {{"appA", daemon_dir_->key_file("appA")},
                     {"appB", daemon_dir_->key_file("appB"), 2}};
    c.delay_us = delay_us;
    c.heartbeat_ms = heartbeat_ms;
    c.workers = 1;
    c.scheduler = scheduler;
    Start(c);
  }
  std::string FileKey(const std::string& rel) {
    struct stat st;
    EXPECT_EQ(::stat((dir_ + "/root/" + rel).c_str(), &st), 0);
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  }
};

TEST_P(MergeTest, ConcurrentSessionsWritingContiguousPiecesAreMerged) {
  StartDaemon(GetParam(), /*delay_us=*/20'000);
  constexpr int kSessions = 4, kPerSession = 8;
  std::vector<uint8_t> expected(kPiece * kSessions * kPerSession);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<uint8_t>(i * 7 + i / 8192);
  std::vector<std::unique_ptr<RawClient>> clients;
  std::vector<int64_t> handles;
  for (int s = 0; s < kSessions; ++s) {
    clients.push_back(Admitted(s % 2 == 0 ? secret_a_ : secret_b_));
    handles.push_back(Open(*clients.back(), "/data/m", O_RDWR | O_CREAT));
    ASSERT_GT(handles.back(), 0);
  }
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int s = 0; s < kSessions; ++s) {
    threads.emplace_back([&, s] {
      RawClient& c = *clients[s];
      for (int i = 0; i < kPerSession; ++i) {
        uint64_t off = (static_cast<uint64_t>(i) * kSessions + s) * kPiece;
        std::vector<uint8_t> tail(expected.begin() + off, expected.begin() + off + kPiece);
        c.SendFrame(
            Op::kPwrite, 100 + i,
            proto::EncodeFields(proto::PwriteRequest{static_cast<uint64_t>(handles[s]), off}),
            tail);
      }
      for (int i = 0; i < kPerSession; ++i) {
        Frame f;
        proto::CountReply count;
        if (c.ReadFrame(&f) && f.header.status == 0 &&
            proto::DecodeFields(f.payload, &count).ok() && count.count == kPiece) {
          ++good;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), kSessions * kPerSession);
  std::ifstream in(dir_ + "/root/m", std::ios::binary);
  std::vector<uint8_t> got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(got == expected) << "file differs from a direct write (" << got.size() << " bytes)";

  nlohmann::json stats = daemon_->StatsJson();
  const nlohmann::json& file = stats["files"][FileKey("m")];
  EXPECT_EQ(file["requests"].get<int>(), kSessions * kPerSession);
  EXPECT_EQ(file["bytes"].get<uint64_t>(), expected.size());
  EXPECT_LT(file["dispatches"].get<int>(), kSessions * kPerSession) << stats.dump(2);
  EXPECT_GT(file["mean_requests_per_dispatch"].get<double>(), 1.0);
  EXPECT_GT(stats["apps"]["appA"]["dispatches"].get<int>(), 0);
  EXPECT_GT(stats["total"]["queue_time_p99_ns"].get<uint64_t>(), 0u);
  EXPECT_EQ(stats["scheduler"]["name"], GetParam());
}

TEST_P(MergeTest, ShortReadsSplitBackPerRequest) {
  constexpr uint64_t kSize = 2 * kPiece + 100;
  {
    std::ofstream out(dir_ + "/root/r", std::ios::binary);
    for (uint64_t i = 0; i < kSize; ++i) out.put(static_cast<char>(i % 251));
  }
  StartDaemon(GetParam(), /*delay_us=*/20'000);
  constexpr int kSessions = 3, kPerSession = 2;
  std::vector<std::unique_ptr<RawClient>> clients;
  std::vector<int64_t> handles;
  for (int s = 0; s < kSessions; ++s) {
    clients.push_back(Admitted(secret_a_));
    handles.push_back(Open(*clients.back(), "/data/r", O_RDONLY));
    ASSERT_GT(handles.back(), 0);
  }
  // Every request is sent before any reply is read (sending does not wait), so they are queued
  // together while the first 20 ms call runs, however the threads below are scheduled.
  for (int s = 0; s < kSessions; ++s) {
    for (int i = 0; i < kPerSession; ++i) {
      uint64_t off = (static_cast<uint64_t>(i) * kSessions + s) * kPiece;
      ASSERT_TRUE(clients[s]->SendFrame(
          Op::kPread, 200 + i,
          proto::EncodeFields(proto::PreadRequest{static_cast<uint64_t>(handles[s]), off,
                                                  static_cast<uint32_t>(kPiece)})));
    }
  }
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int s = 0; s < kSessions; ++s) {
    threads.emplace_back([&, s] {
      RawClient& c = *clients[s];
      for (int i = 0; i < kPerSession; ++i) {
        Frame f;
        if (!c.ReadFrame(&f) || f.header.status != 0) continue;
        uint64_t off = ((f.header.id - 200) * kSessions + s) * kPiece;
        uint64_t want = off >= kSize ? 0 : std::min(kPiece, kSize - off);
        bool ok = f.payload.size() == want;
        for (uint64_t j = 0; ok && j < want; ++j) ok = f.payload[j] == (off + j) % 251;
        if (ok) ++good;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), kSessions * kPerSession);
  // Merged calls ran past end of file: the split above is what was checked.
  nlohmann::json stats = daemon_->StatsJson();
  EXPECT_LT(stats["files"][FileKey("r")]["dispatches"].get<int>(), kSessions * kPerSession);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, MergeTest, ::testing::Values("to-agg", "aioli"),
                         [](const auto& info) {
                           return info.param == "to-agg" ? std::string("ToAgg")
                                                         : std::string("Aioli");
                         });

class DirectTest : public MergeTest {};

TEST_F(DirectTest, MisalignedDirectPwriteIsEinvalAsLocally) {
  StartDaemon("to-agg", 0);
  auto c = Admitted(secret_a_);
  int64_t h = Open(*c, "/data/d", O_RDWR | O_CREAT | O_DIRECT);
  if (h == -EINVAL) GTEST_SKIP() << "this file system has no O_DIRECT";
  ASSERT_GT(h, 0);
  auto pwrite = [&](uint64_t off, size_t n) {
    Frame f;
    EXPECT_TRUE(c->Call(Op::kPwrite,
                        proto::EncodeFields(proto::PwriteRequest{static_cast<uint64_t>(h), off}),
                        &f, std::vector<uint8_t>(n, 'd')));
    return f.header.status;
  };
  EXPECT_EQ(pwrite(0, 100), EINVAL);    // length
  EXPECT_EQ(pwrite(100, 512), EINVAL);  // offset
  EXPECT_EQ(pwrite(4096, 4096), 0);
  struct stat st;
  ASSERT_EQ(::stat((dir_ + "/root/d").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 8192);
}

// twins:window=300ms serves only the current file's queue: a write to a second file is
// held (kSleepUntil) until the window ends, and the client hears heartbeats meanwhile.
TEST_F(DirectTest, HeldRequestKeepsHeartbeatsGoing) {
  StartDaemon("twins:window=300ms", 0, /*heartbeat_ms=*/30);
  auto c = Admitted(secret_a_);
  int64_t a = Open(*c, "/data/a", O_RDWR | O_CREAT);
  int64_t b = Open(*c, "/data/b", O_RDWR | O_CREAT);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  Frame f;
  ASSERT_TRUE(c->Call(Op::kPwrite,
                      proto::EncodeFields(proto::PwriteRequest{static_cast<uint64_t>(a), 0}), &f,
                      {'a'}));
  ASSERT_EQ(f.header.status, 0);
  int before = c->heartbeats();
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(c->Call(Op::kPwrite,
                      proto::EncodeFields(proto::PwriteRequest{static_cast<uint64_t>(b), 0}), &f,
                      {'b'}));
  ASSERT_EQ(f.header.status, 0);
  auto held = std::chrono::steady_clock::now() - start;
  if (held < std::chrono::milliseconds(100)) GTEST_SKIP() << "the window had already ended";
  EXPECT_GE(c->heartbeats() - before, 2);
}

}  // namespace
}  // namespace iorelay::daemon
