// The client library over the shared-memory transport against a real iorelayd: every kind of
// request (data larger than the ring too, metadata, heartbeats), the off switches, a client
// in another network namespace (refused, served over the socket), and a client SIGKILLed
// mid-request (the daemon frees its rings and descriptors; other clients carry on).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "iorelay/iorelay.h"
#include "testutil/daemon_process_testutil.h"

namespace iorelay::client {
namespace {

using Clock = std::chrono::steady_clock;

nlohmann::json Stats(iorelay_client* c) {
  char* json = nullptr;
  if (iorelay_stats_json(c, 0, &json) != 0) return {};
  nlohmann::json j = nlohmann::json::parse(json);
  std::free(json);
  return j;
}

uint64_t Counter(iorelay_client* c, const char* name) {
  nlohmann::json j = Stats(c);
  return j.contains(name) ? j[name].get<uint64_t>() : UINT64_MAX;
}

// Entries of /proc/PID/fd, and mappings of the daemon's rings in /proc/PID/maps.
int CountFds(pid_t pid) {
  int n = 0;
  DIR* d = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  while (d != nullptr && ::readdir(d) != nullptr) ++n;
  if (d != nullptr) ::closedir(d);
  return n;
}
// Rings mapped by the process: distinct memfds in its maps (the daemon maps one connection's
// memfd in several pieces).
int CountRingMappings(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  std::set<std::string> inodes;
  while (std::getline(in, line)) {
    if (line.find("iorelay-shm") == std::string::npos) continue;
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode;
    fields >> range >> perms >> offset >> dev >> inode;
    inodes.insert(inode);
  }
  return static_cast<int>(inodes.size());
}

std::vector<char> Pattern(size_t n, unsigned seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 131 + seed) & 0xff);
  return v;
}

class ShmClient : public ::testing::Test {
 protected:
  void SetUp() override {
    alarm(120);  // a hang fails the test instead of stalling CI
    if (!DaemonProcess::Available()) GTEST_SKIP() << "iorelayd not built";
    ::unsetenv("IORELAY_SHM");
  }
  void TearDown() override {
    if (c_) iorelay_client_destroy(c_);
    d_.reset();
    ::unsetenv("IORELAY_SHM");
    alarm(0);
  }
  // A daemon with 64 KiB rings (so large transfers wrap many times) and a client of it.
  void StartBoth(std::vector<std::string> extra = {}, int timeout_ms = 5000,
                 const std::string& ring = "64KiB") {
    extra.push_back("--shm-ring-bytes");
    extra.push_back(ring);
    d_ = std::make_unique<DaemonProcess>();
    ASSERT_TRUE(d_->Start(extra));
    d_->ExportClientEnv(timeout_ms);
    int err = 0;
    c_ = iorelay_client_from_env(&err);
    ASSERT_NE(c_, nullptr) << strerror(-err);
  }
  std::string Real(const std::string& rel) { return d_->root() + "/" + rel; }

  std::unique_ptr<DaemonProcess> d_;
  iorelay_client* c_ = nullptr;
};

TEST_F(ShmClient, EveryKindOfRequestTravelsThroughTheRings) {
  StartBoth();
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/data", O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  // Sizes around and far beyond the 64 KiB ring: a frame wraps, or streams through it.
  off_t off = 0;
  for (size_t n : {size_t{1}, size_t{4096}, size_t{65536 - 24}, size_t{65536}, size_t{300'001},
                   size_t{4u << 20}}) {
    std::vector<char> out = Pattern(n, static_cast<unsigned>(n));
    ASSERT_EQ(iorelay_pwrite(f, out.data(), n, off), static_cast<ssize_t>(n)) << n;
    std::vector<char> in(n);
    ASSERT_EQ(iorelay_pread(f, in.data(), n, off), static_cast<ssize_t>(n)) << n;
    EXPECT_EQ(in, out) << n;
    off += static_cast<off_t>(n);
  }
  struct stat st;
  ASSERT_EQ(iorelay_fstat(f, &st), 0);
  EXPECT_EQ(st.st_size, off);
  EXPECT_EQ(iorelay_close(f), 0);
  std::ifstream check(Real("data"), std::ios::binary | std::ios::ate);
  EXPECT_EQ(static_cast<off_t>(check.tellg()), off);
  // Metadata.
  ASSERT_EQ(iorelay_mkdir(c_, "/fwd/dir", 0755), 0);
  ASSERT_EQ(iorelay_stat(c_, "/fwd/data", &st, 0), 0);
  EXPECT_EQ(st.st_size, off);
  EXPECT_EQ(iorelay_stat(c_, "/fwd/missing", &st, 0), -ENOENT);
  iorelay_dir* dir = nullptr;
  ASSERT_EQ(iorelay_opendir(c_, "/fwd", &dir), 0);
  int entries = 0;
  while (const iorelay_dirent* e = iorelay_readdir(dir)) entries += e->name[0] != '.';
  iorelay_closedir(dir);
  EXPECT_EQ(entries, 2);
  EXPECT_EQ(iorelay_unlink(c_, "/fwd/data"), 0);
  EXPECT_EQ(iorelay_rmdir(c_, "/fwd/dir"), 0);
  // Really through shared memory: the daemon moved every connection of this client.
  nlohmann::json j = Stats(c_);
  EXPECT_GE(j["connections_shm_attached"].get<uint64_t>(), 1u);
  EXPECT_EQ(j["connections_shm_attached"], j["connections_accepted"]);
  EXPECT_EQ(j["connections_shm_refused"].get<uint64_t>(), 0u);
  EXPECT_GE(j["connections_shm_open"].get<uint64_t>(), 1u);
}

// Writes of 64 KiB and more are served from the daemon's ring (its mirrored mapping: runs that
// wrap around the ring's end are contiguous), held there until written, and reads of 64 KiB and
// more are read into the reply ring, O_DIRECT ones too (aligned there by padding frames).
TEST_F(ShmClient, LargeWritesAndReadsAreServedInPlace) {
  // 1 MiB rings (so a run of 300,001 bytes is lent: at most half a ring is); two client threads,
  // so two connections, each with its own rings. No heartbeats: one still unread in the replies'
  // ring when a read arrives leaves no room to lend the read a run there (seen under ASan:
  // 11 of 12 reads in place).
  // (Pipes off: this is the path without them; the PipedData tests cover theirs.)
  StartBoth(
      {"--workers", "2", "--delay-us", "2000", "--heartbeat-ms", "3600000", "--shm-pipes", "off"},
      5000, "1MiB");
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/inplace", O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  constexpr size_t kWrite = 300'001;  // not a divisor of the ring: the runs wrap
  constexpr int kWrites = 12;
  std::vector<char> all;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kWrites; i += 2) {
        std::vector<char> out = Pattern(kWrite, static_cast<unsigned>(i));
        EXPECT_EQ(iorelay_pwrite(f, out.data(), kWrite, static_cast<off_t>(i) * kWrite),
                  static_cast<ssize_t>(kWrite));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kWrites; ++i) {
    std::vector<char> want = Pattern(kWrite, static_cast<unsigned>(i)), got(kWrite);
    ASSERT_EQ(iorelay_pread(f, got.data(), kWrite, static_cast<off_t>(i) * kWrite),
              static_cast<ssize_t>(kWrite));
    EXPECT_EQ(got, want) << "write " << i;
  }
  nlohmann::json j = Stats(c_);
  // Each frame is published whole into an empty ring: every write and read is in place.
  EXPECT_EQ(j["connections_shm_writes_in_place"].get<uint64_t>(), static_cast<uint64_t>(kWrites));
  EXPECT_EQ(j["connections_shm_reads_in_place"].get<uint64_t>(), static_cast<uint64_t>(kWrites));
  // O_DIRECT, in place both ways: the client pads its stream so that a write's data starts on
  // a page in the ring, and the daemon pads its replies so that a read's data does (small
  // requests and replies in between move both positions by odd amounts).
  iorelay_file* d = nullptr;
  const int opened =
      iorelay_open(c_, "/fwd/direct", O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644, &d);
  if (opened == -EINVAL) GTEST_SKIP() << "no O_DIRECT on this file system";
  ASSERT_EQ(opened, 0);
  constexpr size_t kBlock = 256 << 10;
  constexpr int kBlocks = 6;
  void* aligned = nullptr;
  ASSERT_EQ(::posix_memalign(&aligned, 4096, kBlock), 0);
  auto* block = static_cast<char*>(aligned);
  char small[64] = {};
  for (int i = 0; i < kBlocks; ++i) {
    const size_t odd = 1 + static_cast<size_t>(i) * 11;
    EXPECT_EQ(iorelay_pwrite(f, small, odd, 0), static_cast<ssize_t>(odd));
    std::vector<char> out = Pattern(kBlock, 100 + static_cast<unsigned>(i));
    std::memcpy(block, out.data(), kBlock);
    EXPECT_EQ(iorelay_pwrite(d, block, kBlock, static_cast<off_t>(i) * kBlock), kBlock);
  }
  for (int i = 0; i < kBlocks; ++i) {
    const size_t odd = 1 + static_cast<size_t>(i) * 11;
    EXPECT_EQ(iorelay_pread(f, small, odd, 0), static_cast<ssize_t>(odd));
    std::memset(block, 0, kBlock);
    ASSERT_EQ(iorelay_pread(d, block, kBlock, static_cast<off_t>(i) * kBlock), kBlock);
    EXPECT_EQ(std::vector<char>(block, block + kBlock), Pattern(kBlock, 100 + i)) << "block " << i;
  }
  std::free(aligned);
  EXPECT_EQ(iorelay_close(d), 0);
  EXPECT_EQ(iorelay_close(f), 0);
  EXPECT_EQ(Counter(c_, "connections_shm_writes_in_place"),
            static_cast<uint64_t>(kWrites + kBlocks));
  EXPECT_EQ(Counter(c_, "connections_shm_reads_in_place"),
            static_cast<uint64_t>(kWrites + kBlocks));
}

// A lent write holds the requests' ring behind it for its whole backend call, so a client sending
// a large transfer's next pieces waits for room meanwhile; it reads no heartbeat frame then, and
// the daemon's life signal in the shared page keeps it waiting instead of giving up.
TEST_F(ShmClient, AClientWaitingForRoomBehindALentWriteKeepsWaiting) {
  StartBoth({"--delay-us", "800000", "--heartbeat-ms", "50", "--shm-pipes", "off"},
            /*timeout_ms=*/400, "4MiB");
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/big", O_RDWR | O_CREAT, 0644, &f), 0);
  std::vector<char> out = Pattern(4 << 20, 5);  // four 1 MiB pieces, pipelined
  EXPECT_EQ(iorelay_pwrite(f, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
  std::vector<char> back(out.size());
  EXPECT_EQ(iorelay_pread(f, back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
  EXPECT_EQ(back, out);
  EXPECT_EQ(iorelay_close(f), 0);
  EXPECT_GE(Counter(c_, "connections_shm_writes_in_place"), 1u);
}

TEST_F(ShmClient, HeartbeatsKeepASlowRequestAlive) {
  // Each backend call takes 1.2 s; the client gives up after 400 ms of silence: only the
  // heartbeats through the ring keep the request alive.
  StartBoth({"--delay-us", "1200000", "--heartbeat-ms", "50"}, /*timeout_ms=*/400);
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/slow", O_RDWR | O_CREAT, 0644, &f), 0);
  EXPECT_EQ(iorelay_pwrite(f, "abc", 3, 0), 3);
  EXPECT_EQ(iorelay_close(f), 0);
  EXPECT_GE(Counter(c_, "connections_shm_open"), 1u);
}

// A read into the reply ring holds the stream, so no heartbeat frame can pass it: the daemon
// signals life in the shared page instead, and the client waits.
TEST_F(ShmClient, ASlowReadInPlaceKeepsTheClientWaiting) {
  StartBoth({"--delay-us", "1200000", "--heartbeat-ms", "50", "--shm-pipes", "off"},
            /*timeout_ms=*/400, "1MiB");
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/slowread", O_RDWR | O_CREAT, 0644, &f), 0);
  std::vector<char> out = Pattern(256 << 10, 3), in(256 << 10);
  ASSERT_EQ(iorelay_pwrite(f, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
  // A read is copied instead when the replies' ring is not free at that moment (allowed: the
  // fallback); on a loaded machine that can happen once, so up to three reads.
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::fill(in.begin(), in.end(), 0);
    ASSERT_EQ(iorelay_pread(f, in.data(), in.size(), 0), static_cast<ssize_t>(in.size()));
    EXPECT_EQ(in, out);
    if (Counter(c_, "connections_shm_reads_in_place") >= 1) break;
  }
  EXPECT_EQ(iorelay_close(f), 0);
  EXPECT_GE(Counter(c_, "connections_shm_reads_in_place"), 1u);
}

// --max-io-bytes: the handshake tells the client, which splits larger calls into requests of at
// most that many bytes; the data arrives whole.
TEST_F(ShmClient, ASmallerMaxIoBytesSplitsEveryCall) {
  StartBoth({"--max-io-bytes", "64KiB"});
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/split", O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  constexpr size_t kBytes = (1 << 20) + 1;  // 16 requests of 64 KiB and one of 1 byte
  std::vector<char> out = Pattern(kBytes, 9), in(kBytes);
  ASSERT_EQ(iorelay_pwrite(f, out.data(), kBytes, 0), static_cast<ssize_t>(kBytes));
  ASSERT_EQ(iorelay_pread(f, in.data(), kBytes, 0), static_cast<ssize_t>(kBytes));
  EXPECT_EQ(in, out);
  EXPECT_EQ(iorelay_close(f), 0);
  nlohmann::json by_op = Stats(c_)["total"]["by_op"];
  // (The 64 KiB ones go through the pipes, as kPwritePiped and kPreadPiped.)
  EXPECT_EQ(by_op.value("pwrite", 0u) + by_op.value("pwrite_piped", 0u), 17u);
  EXPECT_EQ(by_op.value("pread", 0u) + by_op.value("pread_piped", 0u), 17u);
}

// Piped data (docs/daemon.md, Piped data): requests of 64 KiB and more move their data through
// a pipe each way, spliced by the daemon to and from the file: memory aligned or not, pieces of a
// pipelined transfer, O_DIRECT, a read past the end of file. Every byte arrives, and the daemon's
// counters show the pipes carried them.
TEST_F(ShmClient, PipedDataArrivesWhole) {
  StartBoth({}, 5000, "1MiB");
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/piped", O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  constexpr size_t kMem = 8 << 20;
  void* aligned = nullptr;
  ASSERT_EQ(::posix_memalign(&aligned, 4096, kMem), 0);
  auto* mem = static_cast<char*>(aligned);
  off_t off = 0;
  std::vector<char> out;
  // (bytes, where in the aligned memory they start)
  const std::pair<size_t, size_t> calls[] = {
      {64 << 10, 0}, {300'001, 17}, {1 << 20, 0}, {1 << 20, 100}, {(6 << 20) + 5, 3}};
  for (auto [n, shift] : calls) {
    out = Pattern(n, static_cast<unsigned>(n));
    std::memcpy(mem + shift, out.data(), n);
    ASSERT_EQ(iorelay_pwrite(f, mem + shift, n, off), static_cast<ssize_t>(n)) << n;
    std::memset(mem, 0, kMem);
    ASSERT_EQ(iorelay_pread(f, mem + shift, n, off), static_cast<ssize_t>(n)) << n;
    EXPECT_TRUE(std::equal(out.begin(), out.end(), mem + shift)) << n;
    off += static_cast<off_t>(n);
  }
  // Past the end: the pipe holds what there is, and the call says how much.
  ASSERT_EQ(iorelay_pread(f, mem, 1 << 20, off - 1000), 1000);
  EXPECT_TRUE(std::equal(out.end() - 1000, out.end(), mem));
  EXPECT_EQ(iorelay_close(f), 0);
  // Every write of 64 KiB or more: 4 calls and the 6 pieces of 1 MiB of the last one (its
  // 5-byte piece goes through the rings). Memory of 1 MiB that starts off a page spans 257 pages,
  // more than a 1 MiB pipe takes: its last page follows in the ring. Reads: the 4 calls and the
  // one past the end at least; of the pipelined pieces, those that find the client's pipe still
  // holding an earlier piece come back in the ring.
  EXPECT_EQ(Counter(c_, "connections_shm_writes_piped"), 10u);
  EXPECT_GE(Counter(c_, "connections_shm_reads_piped"), 5u);
  EXPECT_EQ(Counter(c_, "connections_shm_piped_copied"), 0u);  // each had a pipe of the pool

  // O_DIRECT: page-aligned memory goes to the disk from the pipe's pages.
  iorelay_file* d = nullptr;
  const int opened =
      iorelay_open(c_, "/fwd/piped-direct", O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644, &d);
  if (opened == -EINVAL) GTEST_SKIP() << "no O_DIRECT on this file system";
  ASSERT_EQ(opened, 0);
  const uint64_t writes_before = Counter(c_, "connections_shm_writes_piped");
  for (int i = 0; i < 3; ++i) {
    out = Pattern(1 << 20, 40 + static_cast<unsigned>(i));
    std::memcpy(mem, out.data(), out.size());
    ASSERT_EQ(iorelay_pwrite(d, mem, 1 << 20, static_cast<off_t>(i) << 20), 1 << 20);
  }
  for (int i = 0; i < 3; ++i) {
    std::memset(mem, 0, 1 << 20);
    ASSERT_EQ(iorelay_pread(d, mem, 1 << 20, static_cast<off_t>(i) << 20), 1 << 20);
    out = Pattern(1 << 20, 40 + static_cast<unsigned>(i));
    EXPECT_TRUE(std::equal(out.begin(), out.end(), mem)) << "block " << i;
  }
  EXPECT_EQ(iorelay_close(d), 0);
  EXPECT_EQ(Counter(c_, "connections_shm_writes_piped"), writes_before + 3);
  std::free(aligned);
}

// Pipelined piped reads: while the client takes one piece's bytes out of its pipe, the daemon
// splices the next pieces' behind them, and a piece that found the pipe nearly full has the
// rest of its data in the reply's tail. The client takes from the pipe exactly what each reply
// says is there (reading as much as the piece asked for would take the next piece's bytes).
TEST_F(ShmClient, PipelinedPipedReadsTakeOnlyTheirOwnBytes) {
  StartBoth({"--max-io-bytes", "256KiB"}, 5000, "1MiB");
  constexpr size_t kFile = 16 << 20;
  const std::vector<char> content = Pattern(kFile, 3);
  {
    std::ofstream out(Real("pipelined"), std::ios::binary);
    out.write(content.data(), static_cast<std::streamsize>(kFile));
  }
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/pipelined", O_RDONLY, 0, &f), 0);
  std::vector<char> in(8 << 20);
  for (size_t offset = 0; offset < kFile; offset += 777'777) {  // the last calls end at EOF
    const ssize_t want = static_cast<ssize_t>(std::min(in.size(), kFile - offset));
    ASSERT_EQ(iorelay_pread(f, in.data(), in.size(), static_cast<off_t>(offset)), want) << offset;
    ASSERT_TRUE(std::equal(in.begin(), in.begin() + want, content.begin() + offset)) << offset;
  }
  EXPECT_GT(Counter(c_, "connections_shm_reads_piped"), 100u);
  EXPECT_EQ(iorelay_close(f), 0);
}

// A backend that cannot splice (null): the daemon copies a piped write's data out of the pipe
// and sends a piped read's data as the reply's tail; the calls behave as without pipes.
TEST_F(ShmClient, PipedDataWithABackendThatCannotSplice) {
  StartBoth({"--backend", "null"});
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/null", O_RDWR | O_CREAT, 0644, &f), 0);
  std::vector<char> out = Pattern(256 << 10, 1), in(256 << 10, 'x');
  EXPECT_EQ(iorelay_pwrite(f, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
  EXPECT_EQ(iorelay_pread(f, in.data(), in.size(), 0), static_cast<ssize_t>(in.size()));
  EXPECT_EQ(in, std::vector<char>(in.size(), '\0'));  // what the null backend reads
  EXPECT_EQ(iorelay_close(f), 0);
  nlohmann::json j = Stats(c_);
  EXPECT_EQ(j["total"]["by_op"].value("pwrite_piped", 0u), 1u);
  EXPECT_EQ(j["total"]["by_op"].value("pread_piped", 0u), 1u);
  EXPECT_EQ(j["connections_shm_writes_piped"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["connections_shm_reads_piped"].get<uint64_t>(), 0u);
}

TEST_F(ShmClient, OffOnTheClientOrTheDaemonKeepsTheSocket) {
  ::setenv("IORELAY_SHM", "off", 1);
  StartBoth();
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/a", O_RDWR | O_CREAT, 0644, &f), 0);
  EXPECT_EQ(iorelay_pwrite(f, "abc", 3, 0), 3);
  EXPECT_EQ(iorelay_close(f), 0);
  EXPECT_EQ(Counter(c_, "connections_shm_attached"), 0u);
  EXPECT_EQ(Counter(c_, "connections_shm_refused"), 0u);  // never asked
  iorelay_client_destroy(c_);
  c_ = nullptr;
  d_.reset();

  ::unsetenv("IORELAY_SHM");
  StartBoth({"--shm", "off"});
  ASSERT_EQ(iorelay_open(c_, "/fwd/a", O_RDWR | O_CREAT, 0644, &f), 0);
  EXPECT_EQ(iorelay_pwrite(f, "abc", 3, 0), 3);
  EXPECT_EQ(iorelay_close(f), 0);
  EXPECT_EQ(Counter(c_, "connections_shm_attached"), 0u);
  EXPECT_GE(Counter(c_, "connections_shm_refused"), 1u);
}

TEST_F(ShmClient, AnotherNetworkNamespaceIsRefusedAndServedOverTheSocket) {
  StartBoth();
  const uint64_t refused_before = Counter(c_, "connections_shm_refused");
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  pid_t pid = fork();
  if (pid == 0) {
    ::close(pipefd[0]);
    // A namespace of this kernel, as the multi-host testbed makes: its link must not be
    // bypassed, even though the Unix socket's path is visible from it.
    char verdict = ::unshare(CLONE_NEWNET) == 0 ? 'y' : 's';
    if (verdict == 'y') {
      int err = 0;
      iorelay_client* c = iorelay_client_from_env(&err);
      iorelay_file* f = nullptr;
      if (c == nullptr || iorelay_open(c, "/fwd/ns", O_RDWR | O_CREAT, 0644, &f) != 0 ||
          iorelay_pwrite(f, "netns", 5, 0) != 5 || iorelay_close(f) != 0) {
        verdict = 'n';
      }
      if (c) iorelay_client_destroy(c);
    }
    [[maybe_unused]] ssize_t w = ::write(pipefd[1], &verdict, 1);
    _exit(0);
  }
  ::close(pipefd[1]);
  char verdict = 0;
  ASSERT_EQ(::read(pipefd[0], &verdict, 1), 1);
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (verdict == 's') GTEST_SKIP() << "unshare(CLONE_NEWNET) not permitted here";
  ASSERT_EQ(verdict, 'y');
  EXPECT_EQ(ReadWholeFile(Real("ns")), "netns");
  EXPECT_GT(Counter(c_, "connections_shm_refused"), refused_before);
}

// A client asleep on its ring notices a daemon that dies (and so wakes nobody) when it next looks
// at its socket, well before its liveness timeout of 30 s or the 5 s backend call.
TEST_F(ShmClient, AClientAsleepOnItsRingNoticesTheDaemonsDeath) {
  // (An emulated disk whose first access takes 5 s: metadata calls are not slowed.)
  StartBoth({"--backend", "emulated:seek=5s,bw=1GBps", "--heartbeat-ms", "3600000"},
            /*timeout_ms=*/30000);
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/orphan", O_RDWR | O_CREAT, 0644, &f), 0);
  ASSERT_GE(Counter(c_, "connections_shm_open"), 1u);
  ssize_t got = 0;
  std::thread writer([&] { got = iorelay_pwrite(f, "abc", 3, 0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // asleep on its ring by now
  const auto killed_at = Clock::now();
  d_->Kill();
  writer.join();  // (the time to the join bounds the time to the error)
  EXPECT_LT(got, 0);
  EXPECT_LT(Clock::now() - killed_at, std::chrono::seconds(2));
  iorelay_close(f);
}

// A piped write after the daemon died: its pipe has no reader, so vmsplice fails with EPIPE and
// raises SIGPIPE. The call fails; the application, whose SIGPIPE does what it did, lives on.
TEST_F(ShmClient, APipedWriteToADeadDaemonFailsWithoutSigpipe) {
  ASSERT_NE(::signal(SIGPIPE, SIG_DFL), SIG_ERR);
  StartBoth({}, 5000, "1MiB");
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/dead", O_RDWR | O_CREAT, 0644, &f), 0);
  std::vector<char> out = Pattern(1 << 20, 7);
  ASSERT_EQ(iorelay_pwrite(f, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
  ASSERT_EQ(Counter(c_, "connections_shm_writes_piped"), 1u);
  d_->Kill();
  EXPECT_LT(iorelay_pwrite(f, out.data(), out.size(), 0), 0);
  sigset_t pending;
  ASSERT_EQ(sigpending(&pending), 0);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);  // none left for the application to find
  iorelay_close(f);
}

// The application's own SIGPIPE, pending for the process while the thread blocks it, is left as
// it is, and the piped write to a dead daemon adds none: one SIGPIPE is delivered in all.
std::atomic<int> sigpipes_seen{0};

TEST_F(ShmClient, AnApplicationsPendingSigpipeStaysTheOnlyOne) {
  struct sigaction count {
  }, old{};
  count.sa_handler = [](int) { sigpipes_seen.fetch_add(1); };
  ASSERT_EQ(::sigaction(SIGPIPE, &count, &old), 0);
  StartBoth({}, 5000, "1MiB");
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/dead2", O_RDWR | O_CREAT, 0644, &f), 0);
  std::vector<char> out = Pattern(1 << 20, 9);
  ASSERT_EQ(iorelay_pwrite(f, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
  d_->Kill();
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr), 0);
  sigpipes_seen = 0;
  ASSERT_EQ(::kill(::getpid(), SIGPIPE), 0);  // the application's, pending for the process
  EXPECT_LT(iorelay_pwrite(f, out.data(), out.size(), 0), 0);
  ASSERT_EQ(pthread_sigmask(SIG_UNBLOCK, &pipe_set, nullptr), 0);  // what is pending arrives
  EXPECT_EQ(sigpipes_seen.load(), 1);
  iorelay_close(f);
  ::sigaction(SIGPIPE, &old, nullptr);
}

// With 64 KiB rings and no pipes the child's 1 MiB writes are copied out of the ring; with 2 MiB
// rings they are written in place, so the rings outlive the connection until those writes are
// done; with pipes their data waits in pipes of the daemon's pool, closed when they are done.
enum class KilledMidWrite { kCopied, kInPlace, kPiped };

class ShmClientKilled : public ShmClient, public ::testing::WithParamInterface<KilledMidWrite> {};

TEST_P(ShmClientKilled, MidRequestFreesItsRings) {
  // Slow backend calls, so the child is killed with requests in flight.
  const KilledMidWrite how = GetParam();
  StartBoth({"--delay-us", "200000", "--workers", "2", "--shm-pipes",
             how == KilledMidWrite::kPiped ? "on" : "off"},
            5000, how == KilledMidWrite::kCopied ? "64KiB" : "2MiB");
  iorelay_file* mine = nullptr;
  ASSERT_EQ(iorelay_open(c_, "/fwd/mine", O_RDWR | O_CREAT, 0644, &mine), 0);
  const uint64_t open_before = Counter(c_, "connections_shm_open");
  const int fds_before = CountFds(d_->pid());
  const uint64_t idle_before = Counter(c_, "pipes_idle");
  const int maps_before = CountRingMappings(d_->pid());
  ASSERT_EQ(static_cast<uint64_t>(maps_before), open_before);
  pid_t pid = fork();
  if (pid == 0) {
    int err = 0;
    iorelay_client* c = iorelay_client_from_env(&err);
    iorelay_file* f = nullptr;
    if (c == nullptr || iorelay_open(c, "/fwd/victim", O_RDWR | O_CREAT, 0644, &f) != 0) _exit(1);
    std::vector<char> big = Pattern(1 << 20, 7);
    for (;;) iorelay_pwrite(f, big.data(), big.size(), 0);
  }
  // Killed once it is attached and has a request in flight.
  const auto end = Clock::now() + std::chrono::seconds(10);
  while (Counter(c_, "connections_shm_open") <= open_before && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Until a write is in place, or piped.
  const char* counter = how == KilledMidWrite::kInPlace ? "connections_shm_writes_in_place"
                        : how == KilledMidWrite::kPiped ? "connections_shm_writes_piped"
                                                        : nullptr;
  while (counter != nullptr && Counter(c_, counter) == 0 && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  if (counter != nullptr) {
    EXPECT_GE(Counter(c_, counter), 1u);
  }
  // The daemon frees the rings and the descriptors (but for the empty pipes its pool keeps
  // for the next requests, two descriptors each).
  auto fds_now = [&] {
    const int kept = static_cast<int>(Counter(c_, "pipes_idle")) - static_cast<int>(idle_before);
    return CountFds(d_->pid()) - 2 * kept;
  };
  while ((Counter(c_, "connections_shm_open") != open_before ||
          CountRingMappings(d_->pid()) != maps_before || fds_now() != fds_before) &&
         Clock::now() < end + std::chrono::seconds(5)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(Counter(c_, "connections_shm_open"), open_before);
  EXPECT_EQ(CountRingMappings(d_->pid()), maps_before);
  EXPECT_EQ(fds_now(), fds_before);
  // This client is unaffected.
  EXPECT_EQ(iorelay_pwrite(mine, "still", 5, 0), 5);
  char back[5];
  EXPECT_EQ(iorelay_pread(mine, back, 5, 0), 5);
  EXPECT_EQ(std::string(back, 5), "still");
  EXPECT_EQ(iorelay_close(mine), 0);
}

INSTANTIATE_TEST_SUITE_P(Writes, ShmClientKilled,
                         ::testing::Values(KilledMidWrite::kCopied, KilledMidWrite::kInPlace,
                                           KilledMidWrite::kPiped),
                         [](const ::testing::TestParamInfo<KilledMidWrite>& info) {
                           switch (info.param) {
                             case KilledMidWrite::kCopied:
                               return std::string("Copied");
                             case KilledMidWrite::kInPlace:
                               return std::string("InPlace");
                             case KilledMidWrite::kPiped:
                               return std::string("Piped");
                           }
                           return std::string("?");
                         });

}  // namespace
}  // namespace iorelay::client
