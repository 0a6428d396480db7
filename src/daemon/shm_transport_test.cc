// The daemon's shared-memory transport against a raw peer that maps the rings itself: frames
// through the rings, refusals (off, another namespace), and hostile peers (ring positions out
// of range, a bad frame length, bytes on the socket after the switch) that must close only
// their own connection and leave the rings unmapped and their descriptors closed.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
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
    Result<proto::FrameHeader> h = Status::FromErrno(EPROTO, "no reply");
    // The daemon's heartbeats (op kHeartbeat without the reply bit) may come first.
    for (bool heartbeat = true; heartbeat;) {
      m.msg_controllen = sizeof control;  // (the last call set it to what came)
      struct pollfd p = {c.fd(), POLLIN, 0};
      EXPECT_EQ(::poll(&p, 1, 5000), 1);
      EXPECT_EQ(::recvmsg(c.fd(), &m, MSG_CMSG_CLOEXEC), static_cast<ssize_t>(proto::kHeaderBytes));
      h = proto::DecodeHeader(buf);
      if (!h.ok()) return EPROTO;
      if (h->length > 0) {
        EXPECT_EQ(::recv(c.fd(), buf, h->length, MSG_WAITALL), static_cast<ssize_t>(h->length));
      }
      heartbeat = (h->op & ~proto::kReplyBit) == static_cast<uint16_t>(Op::kHeartbeat);
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
  int pipe_in() const { return pipe_in_; }
  void Ring() { RingDoorbell(daemon_bell_); }
  // Whether the daemon armed its doorbell (it waits to be rung for the next request).
  bool DaemonArmed() { return header_->to_daemon.reader_waiting.load() == 1; }
  // Whether the daemon arms its doorbell within `limit`.
  bool WaitArmed(std::chrono::milliseconds limit) {
    const auto end = Clock::now() + limit;
    while (!DaemonArmed() && Clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    return DaemonArmed();
  }
  // Frames written since Attach that had to ring the doorbell (ring_as_asked).
  int rings() const { return rings_; }
  // Writes a frame and rings the doorbell; with `ring_as_asked`, only when the daemon armed it
  // (as the client library does).
  void WriteFrame(Op op, uint64_t id, const std::vector<uint8_t>& fields, uint32_t length,
                  bool ring_as_asked = false) {
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
    if (!ring_as_asked) {
      Ring();
    } else if (out_.ReaderNeedsWake()) {
      ++rings_;
      Ring();
    }
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
  int rings_ = 0;
};

// A page whose first touch stalls until Release: an anonymous page registered with userfaultfd,
// the way a client makes the kernel's copy from or into its memory last as long as it likes
// (a FUSE file it serves, mapped, does the same).
class StallingPage {
 public:
  StallingPage() {
    bytes_ = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    uffd_ = static_cast<int>(::syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
    addr_ = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (uffd_ < 0 || addr_ == MAP_FAILED) return;
    uffdio_api api = {};
    api.api = UFFD_API;
    uffdio_register reg = {};
    reg.range = {reinterpret_cast<uint64_t>(addr_), bytes_};
    reg.mode = UFFDIO_REGISTER_MODE_MISSING;
    ok_ = ::ioctl(uffd_, UFFDIO_API, &api) == 0 && ::ioctl(uffd_, UFFDIO_REGISTER, &reg) == 0;
  }
  ~StallingPage() {
    Release();
    if (addr_ != MAP_FAILED) ::munmap(addr_, bytes_);
    if (uffd_ >= 0) ::close(uffd_);
  }
  bool ok() const { return ok_; }
  void* addr() const { return addr_; }
  size_t bytes() const { return bytes_; }
  // True once a thread is stalled on the page (its fault reported), within 5 s.
  bool WaitStalled() {
    struct pollfd p = {uffd_, POLLIN, 0};
    uffd_msg msg = {};
    return ::poll(&p, 1, 5000) == 1 && ::read(uffd_, &msg, sizeof msg) == sizeof msg &&
           msg.event == UFFD_EVENT_PAGEFAULT;
  }
  // Fills the page with zeros: the stalled thread goes on.
  void Release() {
    if (!ok_ || released_) return;
    released_ = true;
    uffdio_zeropage z = {};
    z.range = {reinterpret_cast<uint64_t>(addr_), bytes_};
    ::ioctl(uffd_, UFFDIO_ZEROPAGE, &z);
  }

 private:
  size_t bytes_ = 0;
  int uffd_ = -1;
  void* addr_ = MAP_FAILED;
  bool ok_ = false;
  bool released_ = false;
};

class ShmTransportTest : public ::testing::Test, protected testing::DaemonHarness {
 protected:
  void SetUp() override {
    PrepareDirs();
    fds_before_ = CountFds();
  }
  void TearDown() override { Cleanup(); }
  void StartWith(bool shm, int io_threads = 2, int workers = 2, int shm_poll_us = 20,
                 int heartbeat_ms = 1) {
    Config c = BaseConfig();
    c.shm_poll_us = shm_poll_us;
    c.io_threads = io_threads;
    c.workers = workers;
    c.shm = shm;
    c.shm_ring_bytes = 64 * 1024;
    c.heartbeat_ms = heartbeat_ms;  // 1: heartbeats between replies, as on a loaded machine
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
    // (At most as many as at the start: a descriptor the daemon had open for a moment then,
    // under a loaded machine's timing, is not the peer's.)
    while ((CountShmMappings() != 0 || fds() > fds_started_) && Clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(CountShmMappings(), 0);
    EXPECT_LE(fds(), fds_started_);
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

// For --shm-poll-us after a request the daemon looks at the ring instead of arming its
// doorbell, so requests that follow each other closely need no ring; once the time is over it
// arms the doorbell again, and a request rung as asked is answered as before.
TEST_F(ShmTransportTest, PollsTheRingAfterARequestThenArmsItsDoorbell) {
  StartWith(true, 2, 2, /*shm_poll_us=*/10'000);
  std::unique_ptr<RawClient> c = Admitted(secret_a_);
  RawShm shm;
  ASSERT_EQ(shm.Attach(*c), 0);
  constexpr uint64_t kPings = 200;
  for (uint64_t id = 1; id <= kPings; ++id) {
    shm.WriteFrame(Op::kPing, id, {}, 0, /*ring_as_asked=*/true);
    Frame f;
    ASSERT_TRUE(shm.ReadFrame(&f, /*sleep=*/false)) << "ping " << id;
    ASSERT_EQ(f.header.id, id);
  }
  // (The first ping rings; a ping that follows its reply by less than 10 ms does not. A
  // sanitizer build or a loaded machine may leave a few gaps longer than that.)
  EXPECT_LT(shm.rings(), static_cast<int>(kPings / 4));
  ASSERT_TRUE(shm.WaitArmed(std::chrono::seconds(5)));
  const int before = shm.rings();
  shm.WriteFrame(Op::kPing, kPings + 1, {}, 0, /*ring_as_asked=*/true);
  EXPECT_EQ(shm.rings(), before + 1);
  Frame f;
  ASSERT_TRUE(shm.ReadFrame(&f));
  EXPECT_EQ(f.header.id, kPings + 1);
  ExpectOthersServed();
}

// A client that sleeps at once for its replies (no spin: its flag is set when the reply comes)
// is not polled after them, however long --shm-poll-us is: the daemon arms its doorbell after
// each reply and each request rings it, where a spinning client's requests ring almost never
// (above).
TEST_F(ShmTransportTest, DoesNotPollAClientFoundAsleepAtItsReply) {
  // (A poll of 2 s, far above the option's 10 ms limit: a daemon that polled could not pass
  // for a slow one, even under a sanitizer on a loaded machine. No heartbeats: one between a
  // request and its reply would wake this client, which does not go back to sleep as a real
  // one does, so the reply would find it awake.)
  StartWith(true, 2, 2, /*shm_poll_us=*/2'000'000, /*heartbeat_ms=*/600'000);
  std::unique_ptr<RawClient> c = Admitted(secret_a_);
  RawShm shm;
  ASSERT_EQ(shm.Attach(*c), 0);
  constexpr uint64_t kPings = 50;
  for (uint64_t id = 1; id <= kPings; ++id) {
    shm.header()->to_client.reader_waiting.store(1);  // asleep, as a client without spin
    shm.WriteFrame(Op::kPing, id, {}, 0, /*ring_as_asked=*/true);
    Frame f;
    ASSERT_TRUE(shm.ReadFrame(&f, /*sleep=*/false)) << "ping " << id;
    ASSERT_EQ(f.header.id, id);
    // (The loop may look at the ring again only after the client wrote its next request,
    // which then needs no ring; the wait keeps the count exact.)
    ASSERT_TRUE(shm.WaitArmed(std::chrono::seconds(1))) << "polled after reply " << id;
  }
  EXPECT_EQ(shm.rings(), static_cast<int>(kPings));
  ExpectOthersServed();
}

// Without polling, the daemon arms its doorbell as soon as it finds the ring empty.
TEST_F(ShmTransportTest, ArmsItsDoorbellAtOnceWithoutPolling) {
  StartWith(true, 2, 2, /*shm_poll_us=*/0);
  std::unique_ptr<RawClient> c = Admitted(secret_a_);
  RawShm shm;
  ASSERT_EQ(shm.Attach(*c), 0);
  for (uint64_t id = 1; id <= 20; ++id) {
    shm.WriteFrame(Op::kPing, id, {}, 0, /*ring_as_asked=*/true);
    Frame f;
    ASSERT_TRUE(shm.ReadFrame(&f, /*sleep=*/false)) << "ping " << id;
    ASSERT_EQ(f.header.id, id);
    // (The daemon arms before it looks at the ring for the last time; the reply may come
    // first.)
    ASSERT_TRUE(shm.WaitArmed(std::chrono::seconds(5))) << "ping " << id;
  }
  EXPECT_EQ(shm.rings(), 20);
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

// The kernel holds a pipe's mutex while it faults in the pages of a vmsplice into the pipe. A
// client that stalls such a fault while the daemon takes a piped write's bytes out of that pipe
// holds a kernel worker of the daemon's io_uring, not the event loop: another client of the same
// (only) loop is answered meanwhile, and the write goes on once the fault is served.
TEST_F(ShmTransportTest, AClientStallingItsWritePipeHoldsNoEventLoop) {
  StartWith(true, /*io_threads=*/1);
  std::unique_ptr<RawClient> c = Admitted(secret_a_);
  std::unique_ptr<RawClient> bystander = Admitted(secret_b_);
  RawShm shm;
  ASSERT_EQ(shm.Attach(*c), 0);
  StallingPage page;
  if (!page.ok()) GTEST_SKIP() << "userfaultfd is not available here";
  std::vector<char> data(65536, 'w');
  ASSERT_EQ(::write(shm.pipe_out(), data.data(), data.size()), 65536);
  std::thread hostile([&] {
    struct iovec v = {page.addr(), page.bytes()};
    ::vmsplice(shm.pipe_out(), &v, 1, 0);
  });
  const bool stalled = page.WaitStalled();
  std::vector<uint8_t> fields = proto::EncodeFields(proto::PwritePipedRequest{1, 0, 65536});
  if (stalled) shm.WriteFrame(Op::kPwritePiped, 7, fields, static_cast<uint32_t>(fields.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the loop reaches the move
  const auto start = Clock::now();
  Frame f;
  const bool answered = bystander->Call(Op::kPing, {}, &f);
  const auto waited = Clock::now() - start;
  page.Release();
  hostile.join();
  ASSERT_TRUE(stalled);
  EXPECT_TRUE(answered);
  EXPECT_LT(waited, std::chrono::seconds(1));
  // The write went on once its bytes were out: handle 1 was never opened.
  ASSERT_TRUE(shm.ReadFrame(&f));
  EXPECT_EQ(f.header.id, 7u);
  EXPECT_EQ(f.header.status, EBADF);
  shm.WriteFrame(Op::kPing, 8, {}, 0);
  ASSERT_TRUE(shm.ReadFrame(&f));
  EXPECT_EQ(f.header.id, 8u);
}

// Likewise with the client stalled in a read of its pipe into such a page while a worker moves
// a piped read's bytes into the pipe: the worker gives up after a bounded wait and closes that
// connection, so another client's read on the daemon's only worker is served.
TEST_F(ShmTransportTest, AClientStallingItsReadPipeIsClosedAfterABoundedWait) {
  StartWith(true, /*io_threads=*/1, /*workers=*/1);
  {
    std::ofstream out(daemon_dir_->root() + "/f", std::ios::binary);
    std::vector<char> bytes(256 * 1024, 'r');
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  std::unique_ptr<RawClient> c = Admitted(secret_a_);
  const int64_t fh = Open(*c, "/data/f", O_RDONLY);
  ASSERT_GT(fh, 0);
  std::unique_ptr<RawClient> bystander = Admitted(secret_b_);
  const int64_t bh = Open(*bystander, "/data/f", O_RDONLY);
  ASSERT_GT(bh, 0);
  RawShm shm;
  ASSERT_EQ(shm.Attach(*c), 0);
  auto stalling = std::make_unique<StallingPage>();
  StallingPage& page = *stalling;
  if (!page.ok()) GTEST_SKIP() << "userfaultfd is not available here";
  auto pread = [&](uint64_t id, uint64_t offset) {
    std::vector<uint8_t> fields =
        proto::EncodeFields(proto::PreadRequest{static_cast<uint64_t>(fh), offset, 65536});
    shm.WriteFrame(Op::kPreadPiped, id, fields, static_cast<uint32_t>(fields.size()));
  };
  pread(1, 0);  // its bytes wait in the client's pipe
  Frame f;
  ASSERT_TRUE(shm.ReadFrame(&f));
  ASSERT_EQ(f.header.status, 0);
  std::thread hostile([&] { (void)!::read(shm.pipe_in(), page.addr(), page.bytes()); });
  const bool stalled = page.WaitStalled();
  if (stalled) pread(2, 65536);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the worker reaches the move
  const auto start = Clock::now();
  const bool answered = bystander->Call(
      Op::kPread, proto::EncodeFields(proto::PreadRequest{static_cast<uint64_t>(bh), 0, 4096}), &f);
  const auto waited = Clock::now() - start;
  const bool closed = c->WaitClosed(5000);
  page.Release();
  hostile.join();
  ASSERT_TRUE(stalled);
  EXPECT_TRUE(answered);
  EXPECT_EQ(f.header.status, 0);
  EXPECT_LT(waited, std::chrono::milliseconds(2500));  // the 1 s wait, and room for a slow run
  EXPECT_TRUE(closed);
  EXPECT_EQ(Counter("connections_closed_pipe_stalled"), 1u);
  shm.Unmap();
  stalling.reset();  // (its descriptor)
  c.reset();
  bystander.reset();
  ExpectRingsFreed();  // the pool pipe that went with the move came back
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
