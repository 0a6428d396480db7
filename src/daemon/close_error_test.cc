// kClose answers with the backend's close error (network file systems report write-back errors
// at close), and closes only when the last holder of the file lets go.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <atomic>

#include "backend/forwarding_backend.h"
#include "testutil/daemon_harness_testutil.h"

namespace iorelay::daemon {
namespace {

// POSIX, but every close reports EIO after closing, as an NFS client reports a failed
// write-back.
class FailingCloseBackend final : public backend::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  Status Close(int fd) override {
    closes.fetch_add(1);
    (void)ForwardingBackend::Close(fd);
    return Status::IOError("write-back failed");
  }
  static inline std::atomic<int> closes{0};
};

class CloseErrorTest : public ::testing::Test, protected testing::DaemonHarness {
 protected:
  void SetUp() override {
    PrepareDirs();
    Result<std::unique_ptr<Core>> core = BuildCore(BaseConfig());
    ASSERT_TRUE(core.ok()) << core.status().ToString();
    (*core)->backend = std::make_unique<FailingCloseBackend>(std::move((*core)->backend));
    Result<std::unique_ptr<Daemon>> d = Daemon::Start(std::move(*core));
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    daemon_ = std::move(*d);
  }
  void TearDown() override { Cleanup(); }
  int Close(testing::RawClient& c, int64_t handle) {
    const std::vector<uint8_t> fields =
        proto::EncodeFields(proto::HandleRequest{static_cast<uint64_t>(handle)});
    testing::Frame f;
    if (!c.Call(proto::Op::kClose, fields, &f)) return -1;
    return f.header.status;
  }
};

TEST_F(CloseErrorTest, LastCloseReportsTheBackendError) {
  auto c = Admitted(secret_a_);
  int64_t h = Open(*c, "/data/f", O_RDWR | O_CREAT);
  ASSERT_GT(h, 0);
  const int before = FailingCloseBackend::closes.load();
  EXPECT_EQ(Close(*c, h), EIO);
  EXPECT_EQ(FailingCloseBackend::closes.load(), before + 1);
  EXPECT_EQ(Close(*c, h), EBADF) << "the handle is gone even though its close failed";
}

// A request drops its reference to the file before its reply goes (data requests in
// TakeOutcome, handle requests by returning their Answer, sent once the handler has returned): a
// close sent on seeing a write's or an fstat's reply is then always the last reference, and reports
// the error.
TEST_F(CloseErrorTest, ACloseRightAfterAReplyIsTheLastReference) {
  auto c = Admitted(secret_a_);
  for (int i = 0; i < 200; ++i) {
    int64_t h = Open(*c, "/data/g", O_RDWR | O_CREAT);
    ASSERT_GT(h, 0);
    const auto handle = static_cast<uint64_t>(h);
    testing::Frame f;
    if (i % 2 == 0) {
      ASSERT_TRUE(c->Call(proto::Op::kPwrite, proto::EncodeFields(proto::PwriteRequest{handle, 0}),
                          &f, std::vector<uint8_t>(4096, 'x')));
    } else {
      ASSERT_TRUE(
          c->Call(proto::Op::kFstat, proto::EncodeFields(proto::HandleRequest{handle}), &f));
    }
    ASSERT_EQ(f.header.status, 0);
    ASSERT_EQ(Close(*c, h), EIO) << "iteration " << i;
  }
}

}  // namespace
}  // namespace iorelay::daemon
