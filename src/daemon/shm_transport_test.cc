// The daemon's shared-memory transport against a raw peer that maps the rings itself: frames
// through the rings, refusals (off, another namespace), and hostile peers (ring positions out
// of range, a bad frame length, bytes on the socket after the switch) that must close only
// their own connection and leave the rings unmapped and their descriptors closed.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/shm_ring.h"
#include "common/watchdog.h"
#include "testutil/daemon_harness_testutil.h"

namespace iorelay::daemon {
namespace {

using proto::Op;
using testing::Frame;
using testing::RawClient;
using Clock = std::chrono::steady_clock;

int CountFds() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (d != nullptr && ::readdir(d) != nullptr) ++n;
  if (d != nullptr) ::closedir(d);
  return n;
}

int CountShmMappings() {
  std::ifstream in("/proc/self/maps");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find("iorelay-shm") != std::string::npos;
  return n;
}

// The peer's end of the rings, mapped from the descriptors of the attach reply.
class RawShm {
 public:
  ~RawShm() { Unmap(); }
  // Sends kShmAttach (with this process's identity, or `ino_delta` added to the namespace
  // inode) and returns the reply's status; on 0 the rings are mapped.
  int Attach(RawClient& c, uint64_t ino_delta = 0) {
    Result<HostIdentity> me = ReadHostIdentity(0);
    EXPECT_TRUE(me.ok());
    proto::ShmRequest req{me->netns_dev, me->netns_ino + ino_delta, me->boot_id};
    EXPECT_TRUE(c.SendFrame(Op::kShmAttach, 77, proto::EncodeFields(req)));
    uint8_t buf[256];
    int fds[4] = {-1, -1, -1, -1};
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
    struct iovec v = {buf, proto::kHeaderBytes};
    struct msghdr m = {};
    m.msg_iov = &v;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    struct pollfd p = {c.fd(), POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 5000), 1);
    EXPECT_EQ(::recvmsg(c.fd(), &m, MSG_CMSG_CLOEXEC), static_cast<ssize_t>(proto::kHeaderBytes));
    Result<proto::FrameHeader> h = proto::DecodeHeader(buf);
    EXPECT_TRUE(h.ok());
    if (h->length > 0) {
      EXPECT_EQ(::recv(c.fd(), buf, h->length, MSG_WAITALL), static_cast<ssize_t>(h->length));
    }
    if (h->status != 0) return h->status;
    struct cmsghdr* cm = CMSG_FIRSTHDR(&m);
    EXPECT_NE(cm, nullptr);
    std::memcpy(fds, CMSG_DATA(cm), cm->cmsg_len - CMSG_LEN(0));
    proto::ShmReply reply;
    EXPECT_TRUE(proto::DecodeFields({buf, h->length}, &reply).ok());
    EXPECT_EQ(cm->cmsg_len, CMSG_LEN((reply.pipe_pages > 0 ? 4 : 2) * sizeof(int)));
    pipe_out_ = fds[2];
    pipe_in_ = fds[3];
    ring_ = reply.ring_bytes;
    bytes_ = ShmMappingBytes(ring_);
    map_ = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
    EXPECT_NE(map_, MAP_FAILED);
    ::close(fds[0]);
    daemon_bell_ = fds[1];
    header_ = static_cast<ShmHeader*>(map_);
    auto* base = static_cast<uint8_t*>(map_) + kShmHeaderBytes;
    out_ = ShmRingWriter(&header_->to_daemon, base, ring_);
    in_ = ShmRingReader(&header_->to_client, base + ring_, ring_);
    return 0;
  }
  void Unmap() {
    if (map_ != nullptr) ::munmap(map_, bytes_);
    map_ = nullptr;
    for (int* fd : {&daemon_bell_, &pipe_out_, &pipe_in_}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  }
  int pipe_out() const { return pipe_out_; }
  void Ring() { RingDoorbell(daemon_bell_); }
  void WriteFrame(Op op, uint64_t id, const std::vector<uint8_t>& fields, uint32_t length) {
    proto::FrameHeader h;
    h.op = static_cast<uint16_t>(op);
    h.id = id;
    h.length = length;
    uint8_t header[proto::kHeaderBytes];
    proto::EncodeHeader(h, header);
    struct iovec v[2] = {{header, sizeof header},
                         {const_cast<uint8_t*>(fields.data()), fields.size()}};
    Result<size_t> n = out_.Write(v, 2);
    ASSERT_TRUE(n.ok());
    ASSERT_EQ(*n, sizeof header + fields.size());
    Ring();
  }
  // The next reply frame from the ring (heartbeats skipped); false after 5 s. With `sleep`, it
  // sleeps on its doorbell when the ring is empty, else it polls the ring. Bytes read past the
  // frame stay for the next call.
  bool ReadFrame(Frame* f, bool sleep = true) {
    const auto end = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < end) {
      if (got_.size() >= proto::kHeaderBytes) {
        Result<proto::FrameHeader> h = proto::DecodeHeader(got_.data());
        if (!h.ok()) return false;
        const size_t whole = proto::kHeaderBytes + h->length;
        if (got_.size() >= whole) {
          const auto next = got_.begin() + static_cast<ptrdiff_t>(whole);
          // The daemon's heartbeat is op kHeartbeat without the reply bit.
          const bool heartbeat =
              (h->op & ~proto::kReplyBit) == static_cast<uint16_t>(Op::kHeartbeat);
          if (!heartbeat) {
            f->header = *h;
            f->payload.assign(got_.begin() + proto::kHeaderBytes, next);
          }
          got_.erase(got_.begin(), next);
          if (!heartbeat) return true;
          continue;
        }
      }
      uint8_t buf[4096];
      Result<size_t> n = in_.Read(buf, sizeof buf, false);
      if (!n.ok()) return false;
      got_.insert(got_.end(), buf, buf + *n);
      if (*n == 0 && sleep) {
        Result<bool> empty = in_.PrepareToSleep();
        if (!empty.ok()) return false;
        if (*empty) SleepOnFlag(&header_->to_client.reader_waiting, 20);
      } else if (*n == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
    return false;
  }
  ShmHeader* header() { return header_; }

 private:
  void* map_ = nullptr;
  size_t bytes_ = 0;
  uint64_t ring_ = 0;
  int daemon_bell_ = -1;
  int pipe_out_ = -1, pipe_in_ = -1;  // the client's ends of the pipes (piped data)
  ShmHeader* header_ = nullptr;
  ShmRingWriter out_;
  ShmRingReader in_;
  std::vector<uint8_t> got_;  // bytes read from the ring and not yet returned
};

class ShmTransportTest : public ::testing::Test, protected testing::DaemonHarness {
 protected:
  void SetUp() override {
    PrepareDirs();
    fds_before_ = CountFds();
  }
  void TearDown() override { Cleanup(); }
  void StartWith(bool shm) {
    Config c = BaseConfig();
    c.workers = 2;
    c.shm = shm;
    c.shm_ring_bytes = 64 * 1024;
    c.heartbeat_ms = 1;  // heartbeats between replies, as on a loaded machine
    Start(c);
    fds_started_ = CountFds();
  }
  uint64_t Counter(const std::string& name) { return daemon_->StatsJson()[name].get<uint64_t>(); }
  bool WaitCounter(const std::string& name, uint64_t want) {
    const auto end = Clock::now() + std::chrono::seconds(5);
    while (Counter(name) != want) {
      if (Clock::now() > end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }
  // A fresh client still gets answers over the socket.
  void ExpectOthersServed() {
    std::unique_ptr<RawClient> other = Admitted(secret_b_);
    Frame f;
    ASSERT_TRUE(other->Call(Op::kPing, {}, &f));
    EXPECT_EQ(f.header.status, 0);
  }
  // After the peer left: the daemon holds no ring and no descriptor of it (but the empty pipes
  // its pool keeps for the next requests, two descriptors each).
  // The counters fall before the last holder of the connection (a worker, the heartbeat
  // thread) lets it go, so the mappings and descriptors are waited for too.
  void ExpectRingsFreed() {
    EXPECT_TRUE(WaitCounter("connections_shm_open", 0));
    EXPECT_TRUE(WaitCounter("connections_open", 0));
    auto fds = [this] { return CountFds() - 2 * static_cast<int>(Counter("pipes_idle")); };
    const auto end = Clock::now() + std::chrono::seconds(5);
    while ((CountShmMappings() != 0 || fds() != fds_started_) && Clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(CountShmMappings(), 0);
    EXPECT_EQ(fds(), fds_started_);
  }

  int fds_before_ = 0, fds_started_ = 0;
  // A hang fails the test instead of stalling CI.
  Watchdog watchdog_{std::chrono::seconds(60), [] {
                       std::fprintf(stderr, "shm_transport_test: hung for 60 s\n");
                       std::abort();
                     }};
};

TEST_F(ShmTransportTest, RequestsAndRepliesTravelThroughTheRings) {
  StartWith(true);
  std::unique_ptr<RawClient> c = Admitted(secret_a_);
  {
    RawShm shm;
    ASSERT_EQ(shm.Attach(*c), 0);
    EXPECT_TRUE(WaitCounter("connections_shm_attached", 1));
    EXPECT_EQ(Counter("connections_shm_open"), 1u);
    shm.WriteFrame(Op::kPing, 5, {}, 0);
    Frame f;
    ASSERT_TRUE(shm.ReadFrame(&f));
    EXPECT_EQ(f.header.id, 5u);
    EXPECT_EQ(f.header.op, static_cast<uint16_t>(Op::kPing) | proto::kReplyBit);
    EXPECT_EQ(f.header.status, 0);
    // A second attach on a moved connection is refused in the rings.
    Result<HostIdentity> me = ReadHostIdentity(0);
    proto::ShmRequest again{me->netns_dev, me->netns_ino, me->boot_id};
    std::vector<uint8_t> fields = proto::EncodeFields(again);
    shm.WriteFrame(Op::kShmAttach, 6, fields, static_cast<uint32_t>(fields.size()));
    ASSERT_TRUE(shm.ReadFrame(&f));
    EXPECT_EQ(f.header.id, 6u);
    EXPECT_EQ(f.header.status, EALREADY);
  }
  c.reset();  // the socket hangs up: the daemon frees the rings
  ExpectRingsFreed();
}

// The daemon's doorbell to the client is a futex on a flag in the shared page, which the daemon
// only wakes: a client that marks itself asleep before every request so that every reply
// rings, never sleeps, and scribbles the flag of the other ring stalls nothing. (With an
// eventfd the client shared the daemon's open file description: clearing O_NONBLOCK and
// filling the counter blocked the daemon's next ring forever.)
TEST_F(ShmTransportTest, AClientCannotMakeItsDoorbellBlockTheDaemon) {
  StartWith(true);
  std::unique_ptr<RawClient> c = Admitted(secret_a_);
  RawShm shm;
  ASSERT_EQ(shm.Attach(*c), 0);
  for (uint64_t id = 1; id <= 3000; ++id) {
    shm.header()->to_client.reader_waiting.store(1);
    shm.header()->to_daemon.writer_waiting.store(static_cast<uint32_t>(id * 0x9e3779b1u));
    shm.WriteFrame(Op::kPing, id, {}, 0);
    Frame f;
    ASSERT_TRUE(shm.ReadFrame(&f, /*sleep=*/false)) << "ping " << id;
    ASSERT_EQ(f.header.id, id);
  }
  ExpectOthersServed();
}

TEST_F(ShmTransportTest, RefusedWhenOffOrFromAnotherNamespaceAndTheSocketCarriesOn) {
  StartWith(false);
  std::unique_ptr<RawClient> c = Admitted(secret_a_);
  RawShm shm;
  EXPECT_EQ(shm.Attach(*c), EOPNOTSUPP);
  Frame f;
  ASSERT_TRUE(c->Call(Op::kPing, {}, &f));
  EXPECT_EQ(f.header.status, 0);
  EXPECT_EQ(Counter("connections_shm_refused"), 1u);
  daemon_.reset();

  StartWith(true);
  c = Admitted(secret_a_);
  EXPECT_EQ(shm.Attach(*c, /*ino_delta=*/1), EXDEV);
  ASSERT_TRUE(c->Call(Op::kPing, {}, &f));
  EXPECT_EQ(f.header.status, 0);
  EXPECT_EQ(Counter("connections_shm_attached"), 0u);
  EXPECT_EQ(Counter("connections_shm_open"), 0u);
}

// Each way a peer can scribble: the daemon closes that connection (its socket ends), frees
// its rings, and serves the others.
enum class Scribble {
  kTailFarAhead,
  kTailBehind,
  kHugeFrameLength,
  kReaderHead,
  kSocketBytes,
  kPipedDataMissing,
};

class ShmHostileTest : public ShmTransportTest, public ::testing::WithParamInterface<Scribble> {};

TEST_P(ShmHostileTest, ClosesOnlyThatConnection) {
  StartWith(true);
  std::unique_ptr<RawClient> c = Admitted(secret_a_);
  std::unique_ptr<RawClient> bystander = Admitted(secret_b_);
  RawShm shm;
  ASSERT_EQ(shm.Attach(*c), 0);
  ShmHeader* h = shm.header();
  switch (GetParam()) {
    case Scribble::kTailFarAhead:
      h->to_daemon.tail.store(uint64_t{1} << 40);
      shm.Ring();
      break;
    case Scribble::kTailBehind:
      shm.WriteFrame(Op::kPing, 1, {}, 0);
      {
        Frame f;
        ASSERT_TRUE(shm.ReadFrame(&f));  // its reply: the daemon has read it
      }
      h->to_daemon.tail.store(3);
      shm.Ring();
      break;
    case Scribble::kHugeFrameLength:
      shm.WriteFrame(Op::kPing, 1, {}, proto::kMaxPayloadBytes + 1);
      break;
    case Scribble::kReaderHead:
      h->to_client.head.store(uint64_t{1} << 40);  // ahead of anything the daemon wrote
      shm.WriteFrame(Op::kPing, 1, {}, 0);         // its reply cannot be written
      break;
    case Scribble::kSocketBytes:
      ASSERT_TRUE(c->SendFrame(Op::kPing, 1, {}));
      break;
    case Scribble::kPipedDataMissing: {
      // A piped write announcing 64 KiB with 4 KiB in the pipe: the daemon does not wait.
      ASSERT_GE(shm.pipe_out(), 0);
      std::vector<char> page(4096, 'p');
      ASSERT_EQ(::write(shm.pipe_out(), page.data(), page.size()), 4096);
      std::vector<uint8_t> fields = proto::EncodeFields(proto::PwritePipedRequest{1, 0, 65536});
      shm.WriteFrame(Op::kPwritePiped, 1, fields, static_cast<uint32_t>(fields.size()));
      break;
    }
  }
  EXPECT_TRUE(c->WaitClosed(5000));
  EXPECT_TRUE(WaitCounter("connections_shm_open", 0));
  ExpectOthersServed();
  Frame f;
  ASSERT_TRUE(bystander->Call(Op::kPing, {}, &f));
  EXPECT_EQ(f.header.status, 0);
  shm.Unmap();
  c.reset();
  bystander.reset();
  ExpectRingsFreed();
}

std::string ScribbleName(const ::testing::TestParamInfo<Scribble>& info) {
  switch (info.param) {
    case Scribble::kTailFarAhead:
      return "TailFarAhead";
    case Scribble::kTailBehind:
      return "TailBehind";
    case Scribble::kHugeFrameLength:
      return "HugeFrameLength";
    case Scribble::kReaderHead:
      return "ReaderHead";
    case Scribble::kSocketBytes:
      return "SocketBytes";
    case Scribble::kPipedDataMissing:
      return "PipedDataMissing";
  }
  return "?";
}

INSTANTIATE_TEST_SUITE_P(Scribbles, ShmHostileTest,
                         ::testing::Values(Scribble::kTailFarAhead, Scribble::kTailBehind,
                                           Scribble::kHugeFrameLength, Scribble::kReaderHead,
                                           Scribble::kSocketBytes, Scribble::kPipedDataMissing),
                         ScribbleName);

}  // namespace
}  // namespace iorelay::daemon
