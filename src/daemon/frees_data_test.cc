// A request that frees a large file's data (unlink or rename over its last name, open with
// O_TRUNC, the last close of an unlinked file) never runs on an event loop, even while metadata
// is quick: another connection of the same loop is answered while it runs. The same request on
// a small file does run on the loop (the control: the test would see the difference).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "backend/forwarding_backend.h"
#include "testutil/daemon_harness_testutil.h"

namespace iorelay::daemon {
namespace {

using proto::Op;

// POSIX, but open, close, unlink and rename take 1 s while `slow` is set: a file system
// freeing a large file's blocks. `entered` tells the test such a call has started.
class SlowFreeBackend final : public backend::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  static inline std::atomic<bool> slow{false};
  static inline std::atomic<bool> entered{false};

 protected:
  void BeforeCall(const char* op) override {
    const std::string name = op;
    if (slow.load() &&
        (name == "open" || name == "close" || name == "unlink" || name == "rename")) {
      entered.store(true);
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
};

class FreesDataTest : public ::testing::Test, protected testing::DaemonHarness {
 protected:
  void SetUp() override {
    PrepareDirs();
    Config c = BaseConfig();
    c.io_threads = 1;  // both clients on one loop
    c.heartbeat_ms = 3'600'000;
    // Metadata counts as quick even under sanitizers (a stat takes over 50 µs under TSan), so
    // that the small-file controls run on the loop.
    c.inline_max_us = 100'000;
    Result<std::unique_ptr<Core>> core = BuildCore(c);
    ASSERT_TRUE(core.ok()) << core.status().ToString();
    (*core)->backend = std::make_unique<SlowFreeBackend>(std::move((*core)->backend));
    Result<std::unique_ptr<Daemon>> d = Daemon::Start(std::move(*core));
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    daemon_ = std::move(*d);
    a_ = Admitted(secret_a_);
    b_ = Admitted(secret_a_);
  }
  void TearDown() override {
    SlowFreeBackend::slow = false;
    a_.reset();
    b_.reset();
    Cleanup();
  }
  // A file of `bytes` written (allocated, not sparse) beside the daemon.
  void MakeFile(const std::string& name, size_t bytes) {
    std::ofstream out(daemon_dir_->root() + "/" + name, std::ios::binary | std::ios::trunc);
    out << std::string(bytes, 'x');
  }
  // Quick metadata requests until the daemon runs them on its loop again (a slow one earlier
  // sent the mean above the bound).
  void WarmUp() {
    for (int i = 0; i < 100; ++i) {
      testing::Frame f;
      ASSERT_TRUE(b_->Call(Op::kStat, proto::EncodeFields(proto::StatRequest{"/data", 0}), &f));
    }
  }
  // Sends A's request (slow in the backend), then B's stat: true when B was answered while A's
  // request was still running, i.e. the loop did not run A's.
  bool OtherConnectionServedMeanwhile(Op op, const std::vector<uint8_t>& fields) {
    WarmUp();
    SlowFreeBackend::entered = false;
    SlowFreeBackend::slow = true;
    EXPECT_TRUE(a_->SendFrame(op, 77, fields));
    // A's slow call has started (on the loop or off it) before B's stat is sent.
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!SlowFreeBackend::entered.load() && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(SlowFreeBackend::entered.load());
    testing::Frame f;
    EXPECT_TRUE(b_->Call(Op::kStat, proto::EncodeFields(proto::StatRequest{"/data", 0}), &f));
    pollfd p{a_->fd(), POLLIN, 0};
    const bool a_pending = poll(&p, 1, 0) == 0;
    EXPECT_TRUE(a_->ReadFrame(&f));
    EXPECT_EQ(f.header.id, 77u);
    SlowFreeBackend::slow = false;
    return a_pending;
  }

  // A HandleRequest's fields: the handle, 8 bytes little-endian. (Not EncodeFields: GCC 12
  // warns falsely on its insert into an empty vector when inlined here.)
  static std::vector<uint8_t> HandleFields(int64_t handle) {
    std::vector<uint8_t> fields(sizeof handle);
    std::memcpy(fields.data(), &handle, sizeof handle);
    return fields;
  }

  std::unique_ptr<testing::RawClient> a_, b_;
};

constexpr size_t kLarge = 4 << 20;  // above kLoopFreeBytes
constexpr size_t kSmall = 4096;

TEST_F(FreesDataTest, UnlinkOfALargeFileLeavesTheLoop) {
  MakeFile("small", kSmall);
  EXPECT_FALSE(OtherConnectionServedMeanwhile(
      Op::kUnlink, proto::EncodeFields(proto::PathRequest{"/data/small"})))
      << "control: a small file's unlink runs on the loop";
  MakeFile("large", kLarge);
  EXPECT_TRUE(OtherConnectionServedMeanwhile(
      Op::kUnlink, proto::EncodeFields(proto::PathRequest{"/data/large"})));
  EXPECT_NE(access((daemon_dir_->root() + "/large").c_str(), F_OK), 0);
}

TEST_F(FreesDataTest, RenameOverALargeFileLeavesTheLoop) {
  MakeFile("from", kSmall);
  MakeFile("to", kLarge);
  EXPECT_TRUE(OtherConnectionServedMeanwhile(
      Op::kRename, proto::EncodeFields(proto::RenameRequest{"/data/from", "/data/to", 0})));
}

TEST_F(FreesDataTest, TruncatingOpenOfALargeFileLeavesTheLoop) {
  MakeFile("large", kLarge);
  EXPECT_TRUE(OtherConnectionServedMeanwhile(
      Op::kOpen, proto::EncodeFields(proto::OpenRequest{"/data/large", O_RDWR | O_TRUNC, 0})));
  MakeFile("plain", kLarge);
  EXPECT_FALSE(OtherConnectionServedMeanwhile(
      Op::kOpen, proto::EncodeFields(proto::OpenRequest{"/data/plain", O_RDWR, 0})))
      << "control: an open that truncates nothing runs on the loop";
}

TEST_F(FreesDataTest, LastCloseOfAnUnlinkedLargeFileLeavesTheLoop) {
  MakeFile("large", kLarge);
  const int64_t h = Open(*a_, "/data/large", O_RDONLY);
  ASSERT_GT(h, 0);
  ASSERT_EQ(unlink((daemon_dir_->root() + "/large").c_str()), 0);
  EXPECT_TRUE(OtherConnectionServedMeanwhile(Op::kClose, HandleFields(h)));
}

}  // namespace
}  // namespace iorelay::daemon
