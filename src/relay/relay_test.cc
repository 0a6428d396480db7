// A relay (iorelayd --role relay) between real clients and a real I/O-node iorelayd: data and
// metadata pass through, merged writes go upstream as one request each, record locks exclude
// processes across relays, and a dead relay or I/O node gives EIO, not a hang.
#include <fcntl.h>
#include <gtest/gtest.h>
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
#include <string>
#include <thread>
#include <vector>

#include "iorelay/iorelay.h"
#include "testutil/daemon_process_testutil.h"

namespace iorelay::client {
namespace {

using Clock = std::chrono::steady_clock;

// A client of `d` (its address and credential in the environment, as an application has them).
iorelay_client* ClientOf(const DaemonProcess& d, int timeout_ms = 5000) {
  d.ExportClientEnv(timeout_ms);
  int err = 0;
  iorelay_client* c = iorelay_client_from_env(&err);
  EXPECT_NE(c, nullptr) << strerror(-err);
  return c;
}

nlohmann::json StatsOf(const DaemonProcess& d) {
  iorelay_client* c = ClientOf(d);
  if (c == nullptr) return {};
  char* json = nullptr;
  int rc = iorelay_stats_json(c, 0, &json);
  iorelay_client_destroy(c);
  if (rc != 0) return {};
  nlohmann::json j = nlohmann::json::parse(json);
  std::free(json);
  return j;
}

uint64_t Op(const nlohmann::json& stats, const char* op) {
  return stats["total"]["by_op"].value(op, uint64_t{0});
}

class Relay : public ::testing::Test {
 protected:
  void SetUp() override {
    alarm(90);  // a hang fails the test instead of stalling CI
    if (!DaemonProcess::Available()) GTEST_SKIP() << "iorelayd not built";
    ion_ = std::make_unique<DaemonProcess>();
    ASSERT_TRUE(ion_->Start(ion_args_));
    relay_ = std::make_unique<DaemonProcess>();
    ASSERT_TRUE(relay_->StartRelay({ion_.get()}, relay_args_));
  }
  void TearDown() override {
    relay_.reset();
    ion_.reset();
    alarm(0);
  }
  std::string Real(const std::string& rel) const { return ion_->root() + "/" + rel; }

  std::vector<std::string> ion_args_, relay_args_;
  std::unique_ptr<DaemonProcess> ion_, relay_;
};

TEST_F(Relay, WritesAndReadsReachTheIoNode) {
  iorelay_client* c = ClientOf(*relay_);
  ASSERT_NE(c, nullptr);
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c, "/fwd/data", O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  std::vector<char> block(8192);
  for (int i = 0; i < 16; ++i) {
    std::memset(block.data(), 'a' + i, block.size());
    ASSERT_EQ(iorelay_pwrite(f, block.data(), block.size(), i * 8192), 8192);
  }
  ASSERT_EQ(iorelay_lseek(f, 16 * 8192, SEEK_SET), 16 * 8192);
  EXPECT_EQ(iorelay_write(f, "tail", 4), 4);  // at the file offset, through the relay too
  std::string real = ReadWholeFile(Real("data"));
  ASSERT_EQ(real.size(), 16u * 8192 + 4);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(real[i * 8192 + 100], 'a' + i);
  std::vector<char> back(8192);
  ASSERT_EQ(iorelay_pread(f, back.data(), back.size(), 5 * 8192), 8192);
  EXPECT_EQ(back[0], 'f');
  EXPECT_EQ(iorelay_fsync(f, 0), 0);
  struct stat st;
  ASSERT_EQ(iorelay_fstat(f, &st), 0);
  EXPECT_EQ(st.st_size, 16 * 8192 + 4);
  struct stat local;
  ASSERT_EQ(::stat(Real("data").c_str(), &local), 0);
  EXPECT_EQ(st.st_ino, local.st_ino);  // the I/O node's identity, not the relay's
  EXPECT_EQ(iorelay_close(f), 0);
  iorelay_client_destroy(c);

  // Requests in at each hop, and the backend calls that carried them out.
  nlohmann::json relay = StatsOf(*relay_);
  nlohmann::json ion = StatsOf(*ion_);
  EXPECT_EQ(relay["role"], "relay");
  EXPECT_EQ(Op(relay, "pwrite") + Op(relay, "write"), 17u);
  EXPECT_EQ(Op(relay, "pread"), 1u);
  const uint64_t out_writes = relay["backend_calls"].value("pwrite", uint64_t{0}) +
                              relay["backend_calls"].value("pwritev", uint64_t{0});
  EXPECT_GE(out_writes, 1u);
  EXPECT_EQ(Op(ion, "pwrite") + Op(ion, "write"), out_writes);  // one request per call
  EXPECT_EQ(ion["role"], "daemon");
  EXPECT_GE(ion["backend_calls_total"].get<uint64_t>(), 2u);
}

TEST_F(Relay, MetadataPassesThroughAndStaysConfined) {
  iorelay_client* c = ClientOf(*relay_);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(iorelay_mkdir(c, "/fwd/d", 0755), 0);
  EXPECT_EQ(iorelay_mkdir(c, "/fwd/d", 0755), -EEXIST);
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c, "/fwd/d/x", O_WRONLY | O_CREAT, 0640, &f), 0);
  const struct timespec ts[2] = {{100, 0}, {200, 0}};
  EXPECT_EQ(iorelay_futimens(f, ts), 0);
  EXPECT_EQ(iorelay_fchmod(f, 0604), 0);
  struct stat st;
  ASSERT_EQ(::stat(Real("d/x").c_str(), &st), 0);
  EXPECT_EQ(st.st_mtime, 200);
  EXPECT_EQ(st.st_mode & 0777, 0604u);
  ASSERT_EQ(iorelay_close(f), 0);
  ASSERT_EQ(iorelay_stat(c, "/fwd/d/x", &st, 0), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(iorelay_truncate(c, "/fwd/d/x", 123), 0);
  EXPECT_EQ(iorelay_chmod(c, "/fwd/d/x", 0600), 0);
  ASSERT_EQ(::stat(Real("d/x").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 123);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(iorelay_access(c, "/fwd/d/x", R_OK), 0);
  EXPECT_EQ(iorelay_rename(c, "/fwd/d/x", "/fwd/d/y", 0), 0);
  const auto listed = std::chrono::steady_clock::now();
  iorelay_dir* d = nullptr;
  ASSERT_EQ(iorelay_opendir(c, "/fwd/d", &d), 0);
  std::vector<std::string> names;
  while (const iorelay_dirent* e = iorelay_readdir(d)) names.push_back(e->name);
  iorelay_closedir(d);
  EXPECT_NE(std::find(names.begin(), names.end(), "y"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "x"), names.end());
  // The listing brought y's attributes from the I/O node through the relay: they answer a stat
  // (a change made behind the client's back shows only after a second, as with NFS).
  ASSERT_EQ(::truncate(Real("d/y").c_str(), 77), 0);
  ASSERT_EQ(iorelay_stat(c, "/fwd/d/y", &st, 1), 0);
  if (std::chrono::steady_clock::now() - listed < std::chrono::milliseconds(500)) {
    EXPECT_EQ(st.st_size, 123) << "answered by the listing";
  }  // (else the listing's second may be over: a slow run checks nothing here)
  EXPECT_EQ(iorelay_symlink(c, "y", "/fwd/d/link"), 0);
  char target[64] = {};
  EXPECT_EQ(iorelay_readlink(c, "/fwd/d/link", target, sizeof target), 1);
  EXPECT_EQ(iorelay_utimens(c, "/fwd/d/link", ts, 1), 0);
  ASSERT_EQ(::lstat(Real("d/link").c_str(), &st), 0);
  EXPECT_EQ(st.st_mtime, 200);
  EXPECT_EQ(iorelay_link(c, "/fwd/d/link", "/fwd/d/hard", 1), 0);
  ASSERT_EQ(::lstat(Real("d/hard").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(iorelay_unlink(c, "/fwd/d/hard"), 0);
  EXPECT_EQ(iorelay_unlink(c, "/fwd/d/y"), 0);
  EXPECT_EQ(iorelay_stat(c, "/fwd/d/y", &st, 0), -ENOENT);
  EXPECT_EQ(iorelay_unlink(c, "/fwd/d/link"), 0);
  EXPECT_EQ(iorelay_rmdir(c, "/fwd/d"), 0);
  // Confinement: ".." above the export and paths under no export are refused by the relay.
  EXPECT_EQ(iorelay_stat(c, "/fwd/../etc/passwd", &st, 0), -EACCES);
  ASSERT_EQ(iorelay_mkdir(c, "/fwd/a", 0755), 0);  // (a missing "a" is ENOENT, as in the kernel)
  EXPECT_EQ(iorelay_open(c, "/fwd/a/../../x", O_RDONLY, 0, &f), -EACCES);
  EXPECT_EQ(iorelay_rmdir(c, "/fwd/a"), 0);
  iorelay_client_destroy(c);
}

// Issue 45, finding 7: ".." after a symbolic link leaves the link's target, as the kernel's
// walk does (the relay used to drop "toB/.." lexically and answer ENOENT), and never the root.
TEST_F(Relay, DotDotAfterALinkIsWhatTheKernelOpens) {
  ::mkdir(Real("d").c_str(), 0755);
  ::mkdir(Real("d/jobA").c_str(), 0755);
  ::mkdir(Real("d/B").c_str(), 0755);
  std::ofstream(Real("d/jobA/a")) << "a";
  std::ofstream(Real("file")) << "f";
  ASSERT_EQ(::symlink("d/B", Real("toB").c_str()), 0);
  ASSERT_EQ(::symlink("toB", Real("chain").c_str()), 0);
  ASSERT_EQ(::symlink("../B", Real("d/B/up").c_str()), 0);
  ASSERT_EQ(::symlink("loop", Real("loop").c_str()), 0);
  iorelay_client* c = ClientOf(*relay_);
  ASSERT_NE(c, nullptr);
  // The inode a path opens, or -errno, through the relay and in the kernel.
  auto through_relay = [c](const std::string& rel) -> long long {
    iorelay_file* f = nullptr;
    if (int rc = iorelay_open(c, ("/fwd/" + rel).c_str(), O_RDONLY, 0, &f); rc < 0) return rc;
    struct stat st;
    iorelay_fstat(f, &st);
    iorelay_close(f);
    return static_cast<long long>(st.st_ino);
  };
  auto in_kernel = [this](const std::string& rel) -> long long {
    int fd = ::open(Real(rel).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct stat st;
    ::fstat(fd, &st);
    ::close(fd);
    return static_cast<long long>(st.st_ino);
  };
  for (const char* rel :
       {"toB/../jobA/a", "chain/../jobA/a", "chain/up/../jobA/a", "toB/../../d/jobA/a", "toB/..",
        "d/B/../jobA/a", "missing/../file", "file/../file", "loop/../file"}) {
    EXPECT_EQ(through_relay(rel), in_kernel(rel)) << rel;
  }
  EXPECT_EQ(through_relay("toB/../../.."), -EACCES);
  struct stat st;
  EXPECT_EQ(iorelay_stat(c, "/fwd/toB/../jobA/a", &st, 0), 0);
  iorelay_client_destroy(c);
}

// Two processes, two relays (two compute nodes), one I/O node: a write lock held through one
// relay makes the other process's F_SETLK fail and its F_SETLKW wait until it is released.
TEST_F(Relay, LocksExcludeProcessesAcrossRelays) {
  DaemonProcess relay2;
  ASSERT_TRUE(relay2.StartRelay({ion_.get()}));
  {
    iorelay_client* c = ClientOf(*relay_);
    iorelay_file* f = nullptr;
    ASSERT_EQ(iorelay_open(c, "/fwd/locked", O_RDWR | O_CREAT, 0644, &f), 0);
    ASSERT_EQ(iorelay_close(f), 0);
    iorelay_client_destroy(c);
  }
  int to_parent[2], to_child[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  ASSERT_EQ(::pipe(to_child), 0);
  relay_->ExportClientEnv();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  // The parent's tokens pace the child (not fixed sleeps, which a slow machine outran): 'u'
  // just before B waits (A unlocks 300 ms later), 'g' to lock again, 'x' to exit holding it.
  if (child == 0) {  // rank A, through relay 1
    int err = 0;
    iorelay_client* c = iorelay_client_from_env(&err);
    iorelay_file* f = nullptr;
    if (!c || iorelay_open(c, "/fwd/locked", O_RDWR, 0, &f) != 0) _exit(2);
    struct flock lk {};
    lk.l_type = F_WRLCK;
    lk.l_whence = SEEK_SET;
    lk.l_len = 4096;
    if (iorelay_lock(f, F_SETLK, &lk) != 0) _exit(3);
    char b = 'L';
    if (::write(to_parent[1], &b, 1) != 1) _exit(4);
    if (::read(to_child[0], &b, 1) != 1) _exit(9);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    lk.l_type = F_UNLCK;
    if (iorelay_lock(f, F_SETLK, &lk) != 0) _exit(5);
    // Then hold the lock again and exit without unlocking: the session's end releases it.
    if (::read(to_child[0], &b, 1) != 1) _exit(6);
    lk.l_type = F_WRLCK;
    if (iorelay_lock(f, F_SETLK, &lk) != 0) _exit(7);
    if (::write(to_parent[1], &b, 1) != 1) _exit(8);
    if (::read(to_child[0], &b, 1) != 1) _exit(10);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    _exit(0);
  }
  char b = 0;
  ASSERT_EQ(::read(to_parent[0], &b, 1), 1);
  iorelay_client* c = ClientOf(relay2);  // rank B, through relay 2
  ASSERT_NE(c, nullptr);
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c, "/fwd/locked", O_RDWR, 0, &f), 0);
  struct flock lk {};
  lk.l_type = F_WRLCK;
  lk.l_whence = SEEK_SET;
  lk.l_start = 100;
  lk.l_len = 10;
  EXPECT_EQ(iorelay_lock(f, F_SETLK, &lk), -EAGAIN);
  struct flock probe = lk;
  ASSERT_EQ(iorelay_lock(f, F_GETLK, &probe), 0);
  EXPECT_EQ(probe.l_type, F_WRLCK);
  EXPECT_EQ(probe.l_pid, child);  // the application process, not a relay
  auto t0 = Clock::now();
  ASSERT_EQ(::write(to_child[1], "u", 1), 1);
  EXPECT_EQ(iorelay_lock(f, F_SETLKW, &lk), 0);  // waits for A's unlock
  double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_GT(waited, 0.2);
  lk.l_type = F_UNLCK;
  EXPECT_EQ(iorelay_lock(f, F_SETLK, &lk), 0);
  // A locks again and exits holding it: B's wait ends when A's session ends.
  ASSERT_EQ(::write(to_child[1], "g", 1), 1);
  ASSERT_EQ(::read(to_parent[0], &b, 1), 1);
  lk.l_type = F_WRLCK;
  EXPECT_EQ(iorelay_lock(f, F_SETLK, &lk), -EAGAIN);
  ASSERT_EQ(::write(to_child[1], "x", 1), 1);
  EXPECT_EQ(iorelay_lock(f, F_SETLKW, &lk), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(iorelay_close(f), 0);
  iorelay_client_destroy(c);
  nlohmann::json stats = StatsOf(relay2);
  EXPECT_GE(stats["relay_locks"]["waits"].get<uint64_t>(), 2u);
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) ::close(fd);
}

// 16 threads writing 8 KiB blocks of one file in lockstep strides: the relay's scheduler merges
// what arrives while its one worker waits upstream, and each merged dispatch is ONE request at
// the I/O node.
TEST_F(Relay, MergedWritesGoUpstreamAsOneRequest) {
  // Each I/O-node call takes 2 ms more, so requests surely queue at the relay meanwhile.
  relay_.reset();
  ion_ = std::make_unique<DaemonProcess>();
  ASSERT_TRUE(ion_->Start({"--delay-us", "2000"}));
  relay_ = std::make_unique<DaemonProcess>();
  ASSERT_TRUE(relay_->StartRelay({ion_.get()}, {"--workers", "1", "--scheduler", "sjf"}));
  iorelay_client* c = ClientOf(*relay_);
  ASSERT_NE(c, nullptr);
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c, "/fwd/strided", O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  constexpr int kRanks = 16, kSegments = 40, kBlock = 8192;
  std::atomic<int> bad{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.emplace_back([&, r] {
      std::vector<char> block(kBlock, static_cast<char>('A' + r));
      for (int s = 0; s < kSegments; ++s) {
        off_t off = static_cast<off_t>(s * kRanks + r) * kBlock;
        if (iorelay_pwrite(f, block.data(), kBlock, off) != kBlock) bad++;
      }
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(iorelay_close(f), 0);
  iorelay_client_destroy(c);
  std::string real = ReadWholeFile(Real("strided"));
  ASSERT_EQ(real.size(), size_t{kRanks} * kSegments * kBlock);
  for (int s = 0; s < kSegments; ++s) {
    for (int r = 0; r < kRanks; ++r) {
      ASSERT_EQ(real[(static_cast<size_t>(s) * kRanks + r) * kBlock + 7], 'A' + r) << s << " " << r;
    }
  }
  nlohmann::json relay = StatsOf(*relay_);
  nlohmann::json ion = StatsOf(*ion_);
  const uint64_t in = Op(relay, "pwrite");
  const uint64_t out = relay["backend_calls"].value("pwritev", uint64_t{0}) +
                       relay["backend_calls"].value("pwrite", uint64_t{0});
  EXPECT_EQ(in, uint64_t{kRanks} * kSegments);
  // One upstream request per backend call (a merged one of 64 KiB or more goes through the
  // shared-memory pipes, as pwrite_piped).
  EXPECT_EQ(Op(ion, "pwrite") + Op(ion, "pwrite_piped"), out);
  EXPECT_LT(out * 2, in) << relay.dump();  // merged: at least 2 requests per call on average
}

TEST_F(Relay, KilledRelayGivesEioNotAHang) {
  iorelay_client* c = ClientOf(*relay_, 1000);
  ASSERT_NE(c, nullptr);
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c, "/fwd/k", O_RDWR | O_CREAT, 0644, &f), 0);
  relay_->Kill();
  auto t0 = Clock::now();
  EXPECT_EQ(iorelay_pwrite(f, "x", 1, 0), -EIO);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 10.0);
  (void)iorelay_close(f);
  iorelay_client_destroy(c);
}

// One process's waits take at most kMaxParkedPerOwner (256) of the relay's lock threads: its
// 257th wait fails with ENOLCK at once, another process still waits, and every wait is granted
// once the holder lets go.
TEST_F(Relay, OneProcessCannotTakeEveryLockThread) {
  iorelay_client* holder = ClientOf(*ion_);
  ASSERT_NE(holder, nullptr);
  iorelay_file* hf = nullptr;
  ASSERT_EQ(iorelay_open(holder, "/fwd/crowd", O_RDWR | O_CREAT, 0644, &hf), 0);
  struct flock all {};
  all.l_type = F_WRLCK;
  all.l_whence = SEEK_SET;
  ASSERT_EQ(iorelay_lock(hf, F_SETLK, &all), 0);

  // (The client's pool opens a connection per call in flight, up to IORELAY_MAX_CONNECTIONS.)
  setenv("IORELAY_MAX_CONNECTIONS", "512", 1);
  iorelay_client* greedy = ClientOf(*relay_);
  unsetenv("IORELAY_MAX_CONNECTIONS");
  ASSERT_NE(greedy, nullptr);
  iorelay_file* gf = nullptr;
  ASSERT_EQ(iorelay_open(greedy, "/fwd/crowd", O_RDWR, 0, &gf), 0);
  constexpr int kWaits = 256;
  std::vector<std::atomic<int>> rc(kWaits);
  std::vector<std::thread> waits;
  auto wait_for = [](iorelay_file* f, int64_t byte, std::atomic<int>* out) {
    struct flock want {};
    want.l_type = F_WRLCK;
    want.l_whence = SEEK_SET;
    want.l_start = byte;
    want.l_len = 1;
    *out = iorelay_lock(f, F_SETLKW, &want);
  };
  for (int i = 0; i < kWaits; ++i) {
    rc[i] = 1;
    waits.emplace_back(wait_for, gf, i, &rc[i]);
  }
  for (int i = 0; i < 1000 && StatsOf(*relay_)["relay_locks"].value("in_flight", 0) < kWaits; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(StatsOf(*relay_)["relay_locks"].value("in_flight", 0), kWaits);
  std::atomic<int> one_more{1};
  wait_for(gf, kWaits, &one_more);
  EXPECT_EQ(one_more.load(), -ENOLCK);

  iorelay_client* other = ClientOf(*relay_);
  iorelay_file* of = nullptr;
  EXPECT_EQ(iorelay_open(other, "/fwd/crowd", O_RDWR, 0, &of), 0);
  std::atomic<int> other_rc{1};
  std::thread other_wait(wait_for, of, kWaits + 1, &other_rc);
  for (int i = 0; i < 1000 && StatsOf(*relay_)["relay_locks"].value("in_flight", 0) <= kWaits;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(StatsOf(*relay_)["relay_locks"].value("in_flight", 0), kWaits + 1);
  EXPECT_EQ(other_rc.load(), 1) << "another process still waits";

  all.l_type = F_UNLCK;
  ASSERT_EQ(iorelay_lock(hf, F_SETLK, &all), 0);
  for (auto& t : waits) t.join();
  other_wait.join();
  for (int i = 0; i < kWaits; ++i) EXPECT_EQ(rc[i].load(), 0) << "wait " << i;
  EXPECT_EQ(other_rc.load(), 0);
  (void)iorelay_close(of);
  (void)iorelay_close(gf);
  (void)iorelay_close(hf);
  iorelay_client_destroy(other);
  iorelay_client_destroy(greedy);
  iorelay_client_destroy(holder);
}

// A relay told to stop while one of its clients waits for a record lock upstream: the waiter
// gets an error instead of hanging, the relay exits within its drain deadline, and the I/O node
// is left with no lock of the relay's: the range is free once its holder lets go.
TEST_F(Relay, StoppedRelayEndsALockWaitAndLeavesNoLockBehind) {
  iorelay_client* holder = ClientOf(*ion_);
  ASSERT_NE(holder, nullptr);
  iorelay_file* hf = nullptr;
  ASSERT_EQ(iorelay_open(holder, "/fwd/locked", O_RDWR | O_CREAT, 0644, &hf), 0);
  struct flock lk {};
  lk.l_type = F_WRLCK;
  lk.l_whence = SEEK_SET;
  lk.l_len = 4096;
  ASSERT_EQ(iorelay_lock(hf, F_SETLK, &lk), 0);

  iorelay_client* waiter = ClientOf(*relay_);
  ASSERT_NE(waiter, nullptr);
  iorelay_file* wf = nullptr;
  ASSERT_EQ(iorelay_open(waiter, "/fwd/locked", O_RDWR, 0, &wf), 0);
  std::atomic<int> wait_rc{1};
  std::thread wait_thread([&] {
    struct flock want = lk;
    wait_rc = iorelay_lock(wf, F_SETLKW, &want);
  });
  for (int i = 0; i < 500 && StatsOf(*relay_)["relay_locks"].value("waits", uint64_t{0}) == 0;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(StatsOf(*relay_)["relay_locks"].value("waits", uint64_t{0}), 1u);

  auto t0 = Clock::now();
  relay_->Signal(SIGTERM);
  wait_thread.join();
  EXPECT_LT(wait_rc.load(), 0) << "the wait must end with an error, not a lock";
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 10.0);
  bool exited = false;  // a zombie until the fixture reaps it
  for (int i = 0; i < 1000 && !exited; ++i) {
    std::string stat = ReadWholeFile("/proc/" + std::to_string(relay_->pid()) + "/stat");
    size_t paren = stat.rfind(')');
    exited = paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(exited) << "the relay did not exit within 10 s of SIGTERM";
  (void)iorelay_close(wf);
  iorelay_client_destroy(waiter);

  lk.l_type = F_UNLCK;
  ASSERT_EQ(iorelay_lock(hf, F_SETLK, &lk), 0);
  iorelay_client* other = ClientOf(*ion_);
  ASSERT_NE(other, nullptr);
  iorelay_file* of = nullptr;
  ASSERT_EQ(iorelay_open(other, "/fwd/locked", O_RDWR, 0, &of), 0);
  // The I/O node learns of the relay's exit when it reads the closed connection, which may come
  // after the unlock above handed the range to the relay's parked wait; that session's end then
  // frees it. A lock left behind would never be free.
  int rc = -EAGAIN;
  for (int i = 0; i < 500 && rc == -EAGAIN; ++i) {
    struct flock again = lk;
    again.l_type = F_WRLCK;
    rc = iorelay_lock(of, F_SETLK, &again);
    if (rc == -EAGAIN) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(rc, 0) << "a lock of the relay's was left behind";
  EXPECT_EQ(iorelay_close(of), 0);
  iorelay_client_destroy(other);
  EXPECT_EQ(iorelay_close(hf), 0);
  iorelay_client_destroy(holder);
}

TEST_F(Relay, KilledIoNodeGivesEioThroughTheRelay) {
  iorelay_client* c = ClientOf(*relay_);
  ASSERT_NE(c, nullptr);
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c, "/fwd/k", O_RDWR | O_CREAT, 0644, &f), 0);
  ion_->Kill();
  auto t0 = Clock::now();
  EXPECT_EQ(iorelay_pwrite(f, "x", 1, 0), -EIO);
  struct stat st;
  EXPECT_EQ(iorelay_stat(c, "/fwd/k", &st, 0), -EIO);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 20.0);
  (void)iorelay_close(f);
  iorelay_client_destroy(c);
}

TEST(RelayConfig, RefusesWhatCannotWork) {
  if (!DaemonProcess::Available()) GTEST_SKIP() << "iorelayd not built";
  DaemonProcess ion;
  ASSERT_TRUE(ion.Start());
  DaemonProcess relay;
  // A malformed --upstream address is a configuration error: the relay exits at once.
  EXPECT_FALSE(relay.StartRelay({&ion}, {"--upstream", "bogus"}));
}

}  // namespace
}  // namespace iorelay::client
