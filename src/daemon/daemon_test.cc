// In-process daemon over a Unix socket with a raw client: handshake, malformed frames,
// data round trip, errno fidelity, locks, heartbeats, stats and shutdown.
#include "daemon/daemon.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/watchdog.h"
#include "iorelay/version.h"
#include "testutil/daemon_harness_testutil.h"
#include "testutil/raw_client_testutil.h"

namespace iorelay::daemon {
namespace {

using proto::Op;
using testing::Frame;
using testing::RawClient;

// Fails the test run (abort) when a test hangs instead of stalling CI.
// A hung test aborts (with a message) instead of stalling the run.
Watchdog HangGuard(int seconds) {
  return Watchdog(std::chrono::seconds(seconds), [seconds] {
    std::fprintf(stderr, "watchdog: test hung for %d s\n", seconds);
    std::abort();
  });
}

class DaemonTest : public ::testing::Test, protected testing::DaemonHarness {
 protected:
  void SetUp() override { PrepareDirs(); }
  void TearDown() override { Cleanup(); }
  void StartDaemon(int64_t delay_us = 0, int heartbeat_ms = 200) {
    Config c = BaseConfig();
    c.delay_us = delay_us;
    c.heartbeat_ms = heartbeat_ms;
    c.workers = 2;
    c.ready_file = dir_ + "/ready";
    Start(c);
  }
  int Status(RawClient& c, Op op, const std::vector<uint8_t>& fields) {
    Frame f;
    if (!c.Call(op, fields, &f)) return -1;
    return f.header.status;
  }
  bool Ping(RawClient& c) { return Status(c, Op::kPing, {}) == 0; }

  Watchdog watchdog_ = HangGuard(60);
};

TEST_F(DaemonTest, ReadyFileListsAddresses) {
  StartDaemon();
  std::ifstream in(dir_ + "/ready");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "unix:" + socket_);
  daemon_.reset();  // a stopped daemon's ready file is gone
  EXPECT_FALSE(std::ifstream(dir_ + "/ready").good());
}

TEST_F(DaemonTest, WrongSecretIsRefusedAndClosed) {
  StartDaemon();
  RawClient c;
  ASSERT_TRUE(c.Connect(socket_));
  Secret wrong{};
  EXPECT_EQ(c.Handshake(wrong), EACCES);
  EXPECT_TRUE(c.WaitClosed());
}

TEST_F(DaemonTest, RequestBeforeAuthIsRefused) {
  StartDaemon();
  RawClient c;
  ASSERT_TRUE(c.Connect(socket_));
  Frame f;
  ASSERT_TRUE(c.Call(Op::kPing, {}, &f));
  EXPECT_EQ(f.header.status, EACCES);
  EXPECT_TRUE(c.WaitClosed());
}

TEST_F(DaemonTest, EachCredentialNamesItsApp) {
  StartDaemon();
  proto::AuthReply ra, rb;
  auto a = Admitted(secret_a_, &ra);
  auto b = Admitted(secret_b_, &rb);
  EXPECT_EQ(ra.app, "appA");
  EXPECT_EQ(rb.app, "appB");
  EXPECT_NE(ra.session, rb.session);
  EXPECT_EQ(ra.heartbeat_ms, 200u);
  EXPECT_EQ(ra.max_io_bytes, proto::kMaxIoBytes);
  EXPECT_EQ(ra.sealed, 0u);  // a Unix socket: the host's permissions guard it, not tags
}

TEST_F(DaemonTest, MalformedFramesCloseOnlyThatConnection) {
  StartDaemon();
  auto good = Admitted(secret_a_);
  uint8_t header[proto::kHeaderBytes];
  auto fresh = [&] {
    auto c = std::make_unique<RawClient>();
    EXPECT_TRUE(c->Connect(socket_));
    return c;
  };
  {  // truncated header, then the client stops sending
    auto c = fresh();
    ASSERT_TRUE(c->SendBytes("IORL\x01\x00", 6));
    c.reset();
  }
  {  // bad magic
    auto c = fresh();
    proto::EncodeHeader(proto::FrameHeader{static_cast<uint16_t>(Op::kHello), 1, 0, 0}, header);
    header[0] = 'X';
    ASSERT_TRUE(c->SendBytes(header, sizeof header));
    EXPECT_TRUE(c->WaitClosed());
  }
  {  // unknown op
    auto c = fresh();
    proto::EncodeHeader(proto::FrameHeader{999, 1, 0, 0}, header);
    ASSERT_TRUE(c->SendBytes(header, sizeof header));
    EXPECT_TRUE(c->WaitClosed());
  }
  {  // oversized length, before and after auth
    auto c = fresh();
    proto::EncodeHeader(proto::FrameHeader{static_cast<uint16_t>(Op::kHello), 1, 1u << 20, 0},
                        header);
    ASSERT_TRUE(c->SendBytes(header, sizeof header));
    EXPECT_TRUE(c->WaitClosed());
    auto d = Admitted(secret_a_);
    proto::EncodeHeader(
        proto::FrameHeader{static_cast<uint16_t>(Op::kPwrite), 9, proto::kMaxPayloadBytes + 1, 0},
        header);
    ASSERT_TRUE(d->SendBytes(header, sizeof header));
    EXPECT_TRUE(d->WaitClosed());
  }
  {  // inconsistent field lengths: a path longer than the payload
    auto d = Admitted(secret_a_);
    std::vector<uint8_t> fields = proto::EncodeFields(proto::OpenRequest{"/data/x", 0, 0});
    fields[0] = 200;  // the string's length prefix
    Frame f;
    ASSERT_TRUE(d->SendFrame(Op::kOpen, 5, fields));
    if (d->ReadFrame(&f, 2000)) {
      EXPECT_EQ(f.header.status, EPROTO);
    }
    EXPECT_TRUE(d->WaitClosed());
  }
  {  // a write frame shorter than its fields
    auto d = Admitted(secret_a_);
    ASSERT_TRUE(d->SendFrame(Op::kPwrite, 5, {1, 2, 3}));
    EXPECT_TRUE(d->WaitClosed());
  }
  EXPECT_TRUE(Ping(*good));
  auto again = Admitted(secret_b_);
  EXPECT_TRUE(Ping(*again));
}

// kPad frames (a shared-memory client aligns its large writes with them) are skipped: no
// reply, and the next request is answered as usual; one over its bound closes the connection.
TEST_F(DaemonTest, PadFramesAreSkippedWithoutAReply) {
  StartDaemon();
  auto c = Admitted(secret_a_);
  ASSERT_TRUE(
      c->SendFrame(Op::kPad, 7, proto::EncodeFields(proto::PadRequest{std::string(100, '\0')})));
  ASSERT_TRUE(c->SendFrame(Op::kPing, 8, {}));
  Frame f;
  ASSERT_TRUE(c->ReadFrame(&f));
  EXPECT_EQ(f.header.id, 8u);
  EXPECT_EQ(f.header.op, static_cast<uint16_t>(Op::kPing) | proto::kReplyBit);
  ASSERT_TRUE(c->SendFrame(
      Op::kPad, 9,
      proto::EncodeFields(proto::PadRequest{std::string(proto::kMaxPathBytes + 1, '\0')})));
  EXPECT_TRUE(c->WaitClosed());
}

TEST_F(DaemonTest, OpenPwritePreadFstatClose) {
  StartDaemon();
  auto c = Admitted(secret_a_);
  int64_t h = Open(*c, "/data/f", O_RDWR | O_CREAT, 0640);
  ASSERT_GT(h, 0);
  std::string text = "hello relay";
  Frame f;
  ASSERT_TRUE(c->Call(Op::kPwrite,
                      proto::EncodeFields(proto::PwriteRequest{static_cast<uint64_t>(h), 100}), &f,
                      std::vector<uint8_t>(text.begin(), text.end())));
  ASSERT_EQ(f.header.status, 0);
  proto::CountReply count;
  ASSERT_TRUE(proto::DecodeFields(f.payload, &count).ok());
  EXPECT_EQ(count.count, text.size());
  ASSERT_TRUE(c->Call(
      Op::kPread, proto::EncodeFields(proto::PreadRequest{static_cast<uint64_t>(h), 100, 64}), &f));
  ASSERT_EQ(f.header.status, 0);
  EXPECT_EQ(std::string(f.payload.begin(), f.payload.end()), text);  // short read at EOF
  ASSERT_TRUE(
      c->Call(Op::kFstat, proto::EncodeFields(proto::HandleRequest{static_cast<uint64_t>(h)}), &f));
  proto::WireStat st;
  ASSERT_TRUE(proto::DecodeFields(f.payload, &st).ok());
  EXPECT_EQ(st.size, 100 + text.size());
  EXPECT_EQ(st.mode & 0777, 0640u);
  EXPECT_EQ(
      Status(*c, Op::kClose, proto::EncodeFields(proto::HandleRequest{static_cast<uint64_t>(h)})),
      0);
  EXPECT_EQ(
      Status(*c, Op::kClose, proto::EncodeFields(proto::HandleRequest{static_cast<uint64_t>(h)})),
      EBADF);
  struct stat local;
  ASSERT_EQ(::stat((dir_ + "/root/f").c_str(), &local), 0);
  EXPECT_EQ(static_cast<uint64_t>(local.st_size), 100 + text.size());
}

// --max-io-bytes bounds one request, and the handshake told the client the bound: a larger
// read is refused (EINVAL) before any buffer is taken for it; a write frame announcing more
// data closes the connection before any of its data is read.
TEST_F(DaemonTest, RequestsOverMaxIoBytesAreRefused) {
  Config c = BaseConfig();
  c.max_io_bytes = 64 << 10;
  Start(c);
  auto conn = Admitted(secret_a_);
  int64_t h = Open(*conn, "/data/bounded", O_RDWR | O_CREAT, 0640);
  ASSERT_GT(h, 0);
  const auto handle = static_cast<uint64_t>(h);
  EXPECT_EQ(
      Status(*conn, Op::kPread, proto::EncodeFields(proto::PreadRequest{handle, 0, 64 << 10})), 0);
  EXPECT_EQ(Status(*conn, Op::kPread,
                   proto::EncodeFields(proto::PreadRequest{handle, 0, (64 << 10) + 1})),
            EINVAL);
  Frame f;
  ASSERT_TRUE(conn->Call(Op::kPwrite, proto::EncodeFields(proto::PwriteRequest{handle, 0}), &f,
                         std::vector<uint8_t>(64 << 10, 'x')));
  EXPECT_EQ(f.header.status, 0);
  // The header and fields of a write one byte over, in one send (the daemon closes at the
  // header: a second send could find the connection gone); its data never comes.
  const std::vector<uint8_t> fields = proto::EncodeFields(proto::PwriteRequest{handle, 0});
  std::vector<uint8_t> frame(proto::kHeaderBytes);
  proto::EncodeHeader(proto::FrameHeader{static_cast<uint16_t>(Op::kPwrite), 9,
                                         static_cast<uint32_t>(fields.size() + (64 << 10) + 1), 0},
                      frame.data());
  frame.insert(frame.end(), fields.begin(), fields.end());
  ASSERT_TRUE(conn->SendBytes(frame.data(), frame.size()));
  EXPECT_TRUE(conn->WaitClosed());
}

// Offsets are off_t: one past its range, or a request whose end would be, is EINVAL (as
// pread and pwrite say), before any backend call.
TEST_F(DaemonTest, OffsetsBeyondAnOffTAreRefused) {
  StartDaemon();
  auto c = Admitted(secret_a_);
  const auto h = static_cast<uint64_t>(Open(*c, "/data/far", O_RDWR | O_CREAT));
  Frame f;
  const uint64_t last = static_cast<uint64_t>(INT64_MAX);
  ASSERT_TRUE(c->Call(Op::kPwrite, proto::EncodeFields(proto::PwriteRequest{h, last - 10}), &f,
                      std::vector<uint8_t>(4096, 'x')));
  EXPECT_EQ(f.header.status, EINVAL);
  EXPECT_EQ(Status(*c, Op::kPread, proto::EncodeFields(proto::PreadRequest{h, ~uint64_t{0}, 1})),
            EINVAL);
  EXPECT_EQ(Status(*c, Op::kPread, proto::EncodeFields(proto::PreadRequest{h, last - 4096, 4096})),
            0);  // (at EOF: nothing read)
}

// open, announce an adoption, close: the handle's file stays held for the child, and counts
// against the session's open files, so that this loop ends at --max-open-files with EMFILE
// instead of holding a descriptor per round.
TEST_F(DaemonTest, AnnouncedAdoptionsOfClosedHandlesCountAsOpenFiles) {
  Config config = BaseConfig();
  config.max_open_files = 8;
  Start(config);
  auto c = Admitted(secret_a_);
  int emfile_at = -1;
  for (int round = 0; round < 20 && emfile_at < 0; ++round) {
    const int64_t h = Open(*c, "/data/offered", O_RDWR | O_CREAT);
    if (h == -EMFILE) {
      emfile_at = round;
      break;
    }
    ASSERT_GT(h, 0);
    const auto handle = static_cast<uint64_t>(h);
    ASSERT_EQ(
        Status(*c, Op::kExpectAdopt, proto::EncodeFields(proto::ExpectAdoptRequest{{handle}})), 0);
    ASSERT_EQ(Status(*c, Op::kClose, proto::EncodeFields(proto::HandleRequest{handle})), 0);
  }
  EXPECT_EQ(emfile_at, 8);
}

TEST_F(DaemonTest, SharedOffsetReadWriteAndAppend) {
  StartDaemon();
  auto c = Admitted(secret_a_);
  uint64_t h = static_cast<uint64_t>(Open(*c, "/data/g", O_RDWR | O_CREAT | O_APPEND));
  Frame f;
  for (std::string s : {"ab", "cd"}) {
    ASSERT_TRUE(c->Call(Op::kWrite, proto::EncodeFields(proto::WriteRequest{h}), &f,
                        std::vector<uint8_t>(s.begin(), s.end())));
    ASSERT_EQ(f.header.status, 0);
  }
  ASSERT_TRUE(c->Call(Op::kLseek, proto::EncodeFields(proto::LseekRequest{h, 0, SEEK_CUR}), &f));
  proto::OffsetReply off;
  ASSERT_TRUE(proto::DecodeFields(f.payload, &off).ok());
  EXPECT_EQ(off.offset, 4);
  ASSERT_TRUE(c->Call(Op::kLseek, proto::EncodeFields(proto::LseekRequest{h, 1, SEEK_SET}), &f));
  ASSERT_TRUE(c->Call(Op::kRead, proto::EncodeFields(proto::ReadRequest{h, 2}), &f));
  EXPECT_EQ(std::string(f.payload.begin(), f.payload.end()), "bc");
  ASSERT_TRUE(c->Call(Op::kRead, proto::EncodeFields(proto::ReadRequest{h, 10}), &f));
  EXPECT_EQ(std::string(f.payload.begin(), f.payload.end()), "d");
}

TEST_F(DaemonTest, ErrnoFidelity) {
  StartDaemon();
  auto c = Admitted(secret_a_);
  ASSERT_EQ(::mkdir((dir_ + "/root/d").c_str(), 0755), 0);
  ASSERT_EQ(::close(::creat((dir_ + "/root/d/f").c_str(), 0644)), 0);
  EXPECT_EQ(Open(*c, "/data/missing", O_RDONLY), -ENOENT);
  EXPECT_EQ(Open(*c, "/data/d/f", O_RDWR | O_CREAT | O_EXCL), -EEXIST);
  EXPECT_EQ(Open(*c, "/data/d", O_WRONLY), -EISDIR);
  EXPECT_EQ(Open(*c, "/data/../etc/passwd", O_RDONLY), -EACCES);
  EXPECT_EQ(Open(*c, "/elsewhere/x", O_RDONLY), -EACCES);
  EXPECT_EQ(Status(*c, Op::kRmdir, proto::EncodeFields(proto::PathRequest{"/data/d"})), ENOTEMPTY);
  EXPECT_EQ(Status(*c, Op::kMkdir, proto::EncodeFields(proto::MkdirRequest{"/data/d", 0755})),
            EEXIST);
  EXPECT_EQ(Status(*c, Op::kUnlink, proto::EncodeFields(proto::PathRequest{"/data/nope"})), ENOENT);
  EXPECT_EQ(Status(*c, Op::kStat, proto::EncodeFields(proto::StatRequest{"/data/d/f", 0})), 0);
  EXPECT_EQ(
      Status(*c, Op::kRename, proto::EncodeFields(proto::RenameRequest{"/data/d/f", "/data/e", 0})),
      0);
  EXPECT_EQ(Status(*c, Op::kRmdir, proto::EncodeFields(proto::PathRequest{"/data/d"})), 0);
  Frame f;
  ASSERT_TRUE(c->Call(Op::kReaddir, proto::EncodeFields(proto::ReaddirRequest{"/data"}), &f));
  proto::ReaddirReply list;
  ASSERT_TRUE(proto::DecodeFields(f.payload, &list).ok());
  EXPECT_EQ(list.entries.size(), 3u);  // ".", "..", "e"
}

TEST_F(DaemonTest, RecordLocksAcrossSessions) {
  StartDaemon();
  auto a = Admitted(secret_a_);
  auto b = Admitted(secret_a_);
  ASSERT_GT(Open(*a, "/data/locked", O_RDWR | O_CREAT), 0);
  ASSERT_GT(Open(*b, "/data/locked", O_RDWR), 0);
  struct stat st;
  ASSERT_EQ(::stat((dir_ + "/root/locked").c_str(), &st), 0);
  const uint64_t dev = st.st_dev, ino = st.st_ino;
  proto::LockRequest lk{dev, ino, F_SETLK, F_WRLCK, 0, 100, 11};
  EXPECT_EQ(Status(*a, Op::kLock, proto::EncodeFields(lk)), 0);
  EXPECT_EQ(Status(*b, Op::kLock, proto::EncodeFields(lk)), EAGAIN);
  proto::LockRequest get = lk;
  get.cmd = F_GETLK;
  Frame f;
  ASSERT_TRUE(b->Call(Op::kLock, proto::EncodeFields(get), &f));
  proto::LockReply holder;
  ASSERT_TRUE(proto::DecodeFields(f.payload, &holder).ok());
  EXPECT_EQ(holder.type, F_WRLCK);
  EXPECT_EQ(holder.pid, 11);
  proto::LockRequest wait = lk;
  wait.cmd = F_SETLKW;
  ASSERT_TRUE(b->SendFrame(Op::kLock, 77, proto::EncodeFields(wait)));
  // Parked: nothing but heartbeats comes back.
  if (b->ReadFrame(&f, 300, /*keep_heartbeats=*/true)) {
    EXPECT_EQ(f.header.op, static_cast<uint16_t>(Op::kHeartbeat));
  }
  EXPECT_EQ(Status(*a, Op::kUnlockAll, proto::EncodeFields(proto::UnlockAllRequest{dev, ino})), 0);
  ASSERT_TRUE(b->ReadFrame(&f));
  EXPECT_EQ(f.header.id, 77u);
  EXPECT_EQ(f.header.status, 0);
}

TEST_F(DaemonTest, LocksOnlyOnFilesTheSessionHoldsOpen) {
  StartDaemon();
  auto a = Admitted(secret_a_);
  auto b = Admitted(secret_a_);
  int64_t h = Open(*a, "/data/mine", O_RDWR | O_CREAT);
  ASSERT_GT(h, 0);
  struct stat st;
  ASSERT_EQ(::stat((dir_ + "/root/mine").c_str(), &st), 0);
  proto::LockRequest lk{st.st_dev, st.st_ino, F_SETLK, F_WRLCK, 0, 100, 11};
  EXPECT_EQ(Status(*b, Op::kLock, proto::EncodeFields(lk)), EBADF) << "b never opened it";
  proto::LockRequest made_up{12345, 67890, F_SETLK, F_WRLCK, 0, 100, 11};
  EXPECT_EQ(Status(*a, Op::kLock, proto::EncodeFields(made_up)), EBADF);
  EXPECT_EQ(Status(*a, Op::kLock, proto::EncodeFields(lk)), 0);
  EXPECT_EQ(
      Status(*a, Op::kClose, proto::EncodeFields(proto::HandleRequest{static_cast<uint64_t>(h)})),
      0);
  EXPECT_EQ(Status(*a, Op::kLock, proto::EncodeFields(lk)), EBADF) << "closed since";
}

TEST_F(DaemonTest, HeartbeatsWhileARequestIsOutstanding) {
  StartDaemon(/*delay_us=*/500'000, /*heartbeat_ms=*/50);
  auto c = Admitted(secret_a_);
  int64_t h = Open(*c, "/data/slow", O_RDWR | O_CREAT);
  ASSERT_GT(h, 0);
  int before = c->heartbeats();  // the delayed open itself was outstanding
  EXPECT_GE(before, 3);
  Frame f;
  ASSERT_TRUE(c->SendFrame(Op::kPwrite, 42,
                           proto::EncodeFields(proto::PwriteRequest{static_cast<uint64_t>(h), 0}),
                           {'x'}));
  ASSERT_TRUE(c->ReadFrame(&f, 450, /*keep_heartbeats=*/true));  // before the 500 ms reply
  EXPECT_EQ(f.header.op, static_cast<uint16_t>(Op::kHeartbeat));
  EXPECT_EQ(f.header.id, 0u);
  EXPECT_EQ(f.header.length, 0u);
  ASSERT_TRUE(c->ReadFrame(&f));
  EXPECT_EQ(f.header.id, 42u);
  EXPECT_GE(c->heartbeats(), before + 3);
}

TEST_F(DaemonTest, StatsCountPerApp) {
  StartDaemon();
  auto c = Admitted(secret_b_);
  ASSERT_TRUE(Ping(*c));
  Frame f;
  ASSERT_TRUE(c->Call(Op::kStats, {}, &f));
  auto j = nlohmann::json::parse(std::string(f.payload.begin(), f.payload.end()));
  EXPECT_GE(j["apps"]["appB"]["requests"].get<int>(), 1);
  EXPECT_EQ(j["apps"]["appA"]["requests"].get<int>(), 0);
  EXPECT_EQ(j["protocol_version"].get<int>(), proto::kVersion);
  EXPECT_EQ(j["daemon_version"].get<std::string>(), IORELAY_VERSION);
}

TEST_F(DaemonTest, ShutdownFinishesRequestsInFlight) {
  StartDaemon(/*delay_us=*/300'000);
  auto c = Admitted(secret_a_);
  int64_t h = Open(*c, "/data/late", O_RDWR | O_CREAT);
  ASSERT_GT(h, 0);
  ASSERT_TRUE(c->SendFrame(Op::kPwrite, 5,
                           proto::EncodeFields(proto::PwriteRequest{static_cast<uint64_t>(h), 0}),
                           {'z', 'z'}));
  // Shutdown stops reading at once: wait until the daemon has read the write (counted by op).
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!daemon_->StatsJson()["total"]["by_op"].contains("pwrite") &&
         std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::thread stopper([this] { daemon_->Shutdown(); });
  Frame f;
  EXPECT_TRUE(c->ReadFrame(&f));
  EXPECT_EQ(f.header.id, 5u);
  EXPECT_EQ(f.header.status, 0);
  stopper.join();
  struct stat st;
  ASSERT_EQ(::stat((dir_ + "/root/late").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 2);
}

}  // namespace
}  // namespace iorelay::daemon

namespace iorelay::daemon {
namespace {

using testing::Frame;

class OpenFileCapTest : public ::testing::Test, public testing::DaemonHarness {
 protected:
  void SetUp() override { PrepareDirs(); }
  void TearDown() override { Cleanup(); }
};

TEST_F(OpenFileCapTest, ASessionHoldsAtMostMaxOpenFiles) {
  Config c = BaseConfig();
  c.max_open_files = 3;
  Start(c);
  auto a = Admitted(secret_a_);
  auto b = Admitted(secret_b_);
  std::vector<int64_t> handles;
  for (int i = 0; i < 3; ++i) {
    handles.push_back(Open(*a, "/data/f" + std::to_string(i), O_RDWR | O_CREAT));
    ASSERT_GT(handles.back(), 0);
  }
  EXPECT_EQ(Open(*a, "/data/f3", O_RDWR | O_CREAT), -EMFILE);
  EXPECT_GT(Open(*b, "/data/f3", O_RDWR | O_CREAT), 0);  // another session has its own count
  Frame f;
  ASSERT_TRUE(a->Call(proto::Op::kClose,
                      proto::EncodeFields(proto::HandleRequest{static_cast<uint64_t>(handles[0])}),
                      &f));
  EXPECT_EQ(f.header.status, 0);
  EXPECT_GT(Open(*a, "/data/f3", O_RDWR), 0);  // one was closed: room again
}

}  // namespace
}  // namespace iorelay::daemon
