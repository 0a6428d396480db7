// kPwriteRanges at an in-process daemon with a raw client: the ranges land in the table's
// order, the reply counts their bytes, a malformed table closes the connection, and a range
// that fails after others were written gives a short count.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testutil/daemon_harness_testutil.h"

namespace iorelay::daemon {
namespace {

using proto::Op;
using testing::Frame;

// The tail of a kPwriteRanges: the table of (offset, length), then the bytes.
std::vector<uint8_t> Tail(const std::vector<std::pair<uint64_t, std::string>>& ranges) {
  std::vector<uint8_t> out;
  for (const auto& [at, bytes] : ranges) {
    const uint64_t entry[2] = {at, bytes.size()};
    const auto* p = reinterpret_cast<const uint8_t*>(entry);
    out.insert(out.end(), p, p + sizeof entry);
  }
  for (const auto& [at, bytes] : ranges) out.insert(out.end(), bytes.begin(), bytes.end());
  return out;
}

class PwriteRangesTest : public ::testing::Test, protected testing::DaemonHarness {
 protected:
  void SetUp() override {
    PrepareDirs();
    Config c = BaseConfig();
    c.workers = 2;
    Start(c);
  }
  void TearDown() override { Cleanup(); }
  std::string FileText(const std::string& name) {
    std::ifstream in(dir_ + "/root/" + name, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

TEST_F(PwriteRangesTest, RangesLandInOrderAndTheReplyCountsTheirBytes) {
  auto c = Admitted(secret_a_);
  const int64_t h = Open(*c, "/data/f", O_RDWR | O_CREAT, 0644);
  ASSERT_GT(h, 0);
  Frame f;
  // The third range overwrites part of the first: the table's order decides.
  ASSERT_TRUE(c->Call(Op::kPwriteRanges,
                      proto::EncodeFields(proto::RangesRequest{static_cast<uint64_t>(h), 3}), &f,
                      Tail({{0, "aaaa"}, {10, "bb"}, {2, "XY"}})));
  ASSERT_EQ(f.header.status, 0);
  proto::CountReply count;
  ASSERT_TRUE(proto::DecodeFields(f.payload, &count).ok());
  EXPECT_EQ(count.count, 8u);
  EXPECT_EQ(FileText("f"), std::string("aaXY") + std::string(6, '\0') + "bb");
}

TEST_F(PwriteRangesTest, AMalformedTableClosesTheConnection) {
  auto good = Admitted(secret_a_);
  const int64_t h = Open(*good, "/data/g", O_RDWR | O_CREAT, 0644);
  ASSERT_GT(h, 0);
  const auto fields = [&](uint64_t n) {
    return proto::EncodeFields(proto::RangesRequest{static_cast<uint64_t>(h), n});
  };
  std::vector<uint8_t> lengths_over = Tail({{0, "abc"}});
  lengths_over.pop_back();  // the table says 3 bytes, 2 follow
  std::vector<uint8_t> wraps = Tail({{UINT64_MAX - 1, "abc"}});
  const std::vector<std::pair<uint64_t, std::vector<uint8_t>>> bad = {
      {0, Tail({{0, "abc"}})},  // no entries
      {2, Tail({{0, "abc"}})},  // more entries than the tail holds
      {1, lengths_over},        // lengths past the bytes
      {1, wraps},               // past an off_t
      {proto::kMaxWriteRanges + 1, std::vector<uint8_t>(16 * 4097 + 1)},  // too many
  };
  for (const auto& [n, tail] : bad) {
    auto c = Admitted(secret_a_);
    const int64_t hc = Open(*c, "/data/g", O_RDWR, 0644);
    ASSERT_GT(hc, 0);
    Frame f;
    ASSERT_TRUE(c->SendFrame(
        Op::kPwriteRanges, 7,
        proto::EncodeFields(proto::RangesRequest{static_cast<uint64_t>(hc), n}), tail));
    if (c->ReadFrame(&f, 2000)) {
      EXPECT_NE(f.header.status, 0) << n;
    }
    EXPECT_TRUE(c->WaitClosed()) << n;
  }
  Frame f;  // the other connection still works
  ASSERT_TRUE(good->Call(Op::kPwriteRanges, fields(1), &f, Tail({{1, "z"}})));
  EXPECT_EQ(f.header.status, 0);
  EXPECT_EQ(FileText("g"), std::string("\0z", 2));
}

// A file size limit (RLIMIT_FSIZE, this process's: the daemon runs in it) fails the second
// range with EFBIG: the first one's bytes are the count; failing first, the errno is the reply.
TEST_F(PwriteRangesTest, ARangeThatFailsAfterOthersGivesAShortCount) {
  auto c = Admitted(secret_a_);
  const int64_t h = Open(*c, "/data/h", O_RDWR | O_CREAT, 0644);
  ASSERT_GT(h, 0);
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGXFSZ, &ignore, &old), 0);
  struct rlimit was {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &was), 0);
  struct rlimit small = was;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const auto fields = proto::EncodeFields(proto::RangesRequest{static_cast<uint64_t>(h), 2});
  Frame partly, first;
  const bool sent = c->Call(Op::kPwriteRanges, fields, &partly, Tail({{0, "ab"}, {8192, "cd"}})) &&
                    c->Call(Op::kPwriteRanges, fields, &first, Tail({{8192, "cd"}, {0, "ab"}}));
  setrlimit(RLIMIT_FSIZE, &was);
  sigaction(SIGXFSZ, &old, nullptr);
  ASSERT_TRUE(sent);
  ASSERT_EQ(partly.header.status, 0);
  proto::CountReply count;
  ASSERT_TRUE(proto::DecodeFields(partly.payload, &count).ok());
  EXPECT_EQ(count.count, 2u);
  EXPECT_EQ(first.header.status, EFBIG);
  EXPECT_EQ(FileText("h"), "ab");
}

}  // namespace
}  // namespace iorelay::daemon
