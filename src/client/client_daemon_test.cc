// The C API against a real iorelayd: every call, errno fidelity, concurrency, liveness
// (stopped, killed, restarted daemon), credentials, fork, locks and the direct fallback.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "iorelay/iorelay.h"
#include "testutil/daemon_process_testutil.h"

namespace iorelay::client {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

class ClientDaemon : public ::testing::Test {
 protected:
  void SetUp() override {
    alarm(90);  // a hang fails the test instead of stalling CI
    if (!DaemonProcess::Available()) GTEST_SKIP() << "iorelayd not built";
    d_ = std::make_unique<DaemonProcess>();
    ASSERT_TRUE(d_->Start());
    d_->ExportClientEnv(timeout_ms_);
    int err = 0;
    c_ = iorelay_client_from_env(&err);
    ASSERT_NE(c_, nullptr) << strerror(-err);
  }
  void TearDown() override {
    if (c_) iorelay_client_destroy(c_);
    d_.reset();
    alarm(0);
  }
  iorelay_file* Open(const char* path, int flags, int* rc_out = nullptr) {
    iorelay_file* f = nullptr;
    int rc = iorelay_open(c_, path, flags, 0644, &f);
    if (rc_out) *rc_out = rc;
    return rc == 0 ? f : nullptr;
  }
  std::string Real(const std::string& rel) { return d_->root() + "/" + rel; }

  int timeout_ms_ = 5000;
  std::unique_ptr<DaemonProcess> d_;
  iorelay_client* c_ = nullptr;
};

TEST_F(ClientDaemon, EveryCallRoundTrips) {
  EXPECT_EQ(iorelay_is_forwarded(c_, "/fwd/a"), 1);
  EXPECT_EQ(iorelay_is_forwarded(c_, "/fwdx"), 0);
  iorelay_file* f = Open("/fwd/f", O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_NE(f, nullptr);
  EXPECT_STREQ(iorelay_file_path(f), "/fwd/f");
  EXPECT_EQ(iorelay_write(f, "hello", 5), 5);
  EXPECT_EQ(iorelay_lseek(f, 0, SEEK_CUR), 5);
  EXPECT_EQ(iorelay_pwrite(f, "HE", 2, 0), 2);
  char a[] = " big", b[] = " world";
  struct iovec wv[2] = {{a, 4}, {b, 6}};
  EXPECT_EQ(iorelay_writev(f, wv, 2), 10);
  EXPECT_EQ(iorelay_pwritev(f, wv, 1, 15), 4);
  EXPECT_EQ(ReadWholeFile(Real("f")), "HEllo big world big");
  EXPECT_EQ(iorelay_lseek(f, 0, SEEK_SET), 0);
  char buf[64] = {};
  EXPECT_EQ(iorelay_read(f, buf, 5), 5);
  EXPECT_STREQ(buf, "HEllo");
  char r1[4] = {}, r2[6] = {};
  struct iovec rv[2] = {{r1, 4}, {r2, 6}};
  EXPECT_EQ(iorelay_readv(f, rv, 2), 10);
  EXPECT_EQ(std::string(r1, 4) + std::string(r2, 6), " big world");
  std::memset(buf, 0, sizeof buf);
  EXPECT_EQ(iorelay_pread(f, buf, sizeof buf, 6), 13);  // short at EOF
  EXPECT_STREQ(buf, "big world big");
  EXPECT_EQ(iorelay_preadv(f, rv, 2, 100), 0);
  EXPECT_EQ(iorelay_fsync(f, 0), 0);
  EXPECT_EQ(iorelay_fsync(f, 1), 0);
  EXPECT_EQ(iorelay_ftruncate(f, 5), 0);
  EXPECT_EQ(iorelay_fallocate(f, 0, 0, 8192), 0);
  struct stat st;
  EXPECT_EQ(iorelay_fstat(f, &st), 0);
  EXPECT_EQ(st.st_size, 8192);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  struct statfs sf;
  EXPECT_EQ(iorelay_fstatfs(f, &sf), 0);
  EXPECT_GT(sf.f_bsize, 0);
  EXPECT_EQ(iorelay_getfl(f) & O_ACCMODE, O_RDWR);
  EXPECT_EQ(iorelay_setfl(f, O_APPEND), 0);
  EXPECT_TRUE(iorelay_getfl(f) & O_APPEND);
  EXPECT_EQ(iorelay_write(f, "Z", 1), 1);
  EXPECT_EQ(iorelay_fstat(f, &st), 0);
  EXPECT_EQ(st.st_size, 8193);
  struct flock lk {};
  lk.l_type = F_WRLCK;
  lk.l_whence = SEEK_END;
  lk.l_start = -10;
  lk.l_len = 10;
  EXPECT_EQ(iorelay_lock(f, F_SETLK, &lk), 0);
  lk.l_type = F_RDLCK;
  EXPECT_EQ(iorelay_lock(f, F_GETLK, &lk), 0);
  EXPECT_EQ(lk.l_type, F_UNLCK);  // own locks never conflict
  lk.l_type = F_UNLCK;
  lk.l_whence = SEEK_SET;
  lk.l_start = 0;
  lk.l_len = 0;
  EXPECT_EQ(iorelay_lock(f, F_SETLK, &lk), 0);
  iorelay_file* g = iorelay_file_ref(f);
  EXPECT_EQ(iorelay_close(f), 0);
  EXPECT_EQ(iorelay_pread(g, buf, 1, 0), 1);  // the reference still works
  EXPECT_EQ(iorelay_close(g), 0);

  EXPECT_EQ(iorelay_stat(c_, "/fwd/f", &st, 0), 0);
  EXPECT_EQ(st.st_size, 8193);
  EXPECT_EQ(iorelay_statfs(c_, "/fwd", &sf), 0);
  EXPECT_EQ(iorelay_access(c_, "/fwd/f", R_OK | W_OK), 0);
  EXPECT_EQ(iorelay_mkdir(c_, "/fwd/dir", 0755), 0);
  EXPECT_EQ(iorelay_rename(c_, "/fwd/f", "/fwd/dir/g", 0), 0);
  EXPECT_EQ(iorelay_truncate(c_, "/fwd/dir/g", 3), 0);
  ASSERT_EQ(symlink("g", Real("dir/link").c_str()), 0);
  char target[2] = {};
  EXPECT_EQ(iorelay_readlink(c_, "/fwd/dir/link", target, 2), 1);
  EXPECT_EQ(target[0], 'g');
  EXPECT_EQ(iorelay_stat(c_, "/fwd/dir/link", &st, 1), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  iorelay_dir* d = nullptr;
  ASSERT_EQ(iorelay_opendir(c_, "/fwd/dir", &d), 0);
  std::set<std::string> names;
  while (const iorelay_dirent* e = iorelay_readdir(d)) names.insert(e->name);
  iorelay_closedir(d);
  EXPECT_EQ(names, (std::set<std::string>{".", "..", "g", "link"}));
  EXPECT_EQ(iorelay_unlink(c_, "/fwd/dir/link"), 0);
  EXPECT_EQ(iorelay_unlink(c_, "/fwd/dir/g"), 0);
  EXPECT_EQ(iorelay_rmdir(c_, "/fwd/dir"), 0);
  char* json = nullptr;
  ASSERT_EQ(iorelay_stats_json(c_, 0, &json), 0);
  EXPECT_EQ(json[0], '{');
  free(json);
  EXPECT_EQ(iorelay_stats_json(c_, 1, &json), -EINVAL);
}

TEST_F(ClientDaemon, ErrnosMatchALocalFileSystem) {
  ASSERT_EQ(mkdir(Real("full").c_str(), 0755), 0);
  std::ofstream(Real("full/x")) << "x";
  std::ofstream(Real("plain")) << "p";
  int rc;
  EXPECT_EQ(Open("/fwd/missing", O_RDONLY, &rc), nullptr);
  EXPECT_EQ(rc, -ENOENT);
  Open("/fwd/plain", O_RDWR | O_CREAT | O_EXCL, &rc);
  EXPECT_EQ(rc, -EEXIST);
  Open("/fwd/plain/sub", O_RDONLY, &rc);
  EXPECT_EQ(rc, -ENOTDIR);
  Open("/fwd/full", O_RDWR, &rc);
  EXPECT_EQ(rc, -EISDIR);
  EXPECT_EQ(iorelay_mkdir(c_, "/fwd/full", 0755), -EEXIST);
  EXPECT_EQ(iorelay_rmdir(c_, "/fwd/full"), -ENOTEMPTY);
  EXPECT_EQ(iorelay_unlink(c_, "/fwd/full"), -EISDIR);
  EXPECT_EQ(iorelay_rmdir(c_, "/fwd/plain"), -ENOTDIR);
  EXPECT_EQ(iorelay_access(c_, "/fwd/nope", F_OK), -ENOENT);
  struct stat st;
  EXPECT_EQ(iorelay_stat(c_, "/fwd/nope", &st, 0), -ENOENT);
  char buf[8];
  EXPECT_EQ(iorelay_readlink(c_, "/fwd/plain", buf, sizeof buf), -EINVAL);
  iorelay_dir* d;
  EXPECT_EQ(iorelay_opendir(c_, "/fwd/plain", &d), -ENOTDIR);
  iorelay_file* ro = Open("/fwd/plain", O_RDONLY);
  ASSERT_NE(ro, nullptr);
  EXPECT_EQ(iorelay_write(ro, "x", 1), -EBADF);
  EXPECT_EQ(iorelay_pwrite(ro, "x", 1, 0), -EBADF);
  EXPECT_EQ(iorelay_lseek(ro, -5, SEEK_SET), -EINVAL);
  EXPECT_EQ(iorelay_ftruncate(ro, 0), -EINVAL);  // as ftruncate(2) on a read-only fd
  struct flock lk {};
  lk.l_type = F_WRLCK;
  EXPECT_EQ(iorelay_lock(ro, F_SETLK, &lk), -EBADF);
  EXPECT_EQ(iorelay_close(ro), 0);
  iorelay_file* wo = Open("/fwd/plain", O_WRONLY);
  ASSERT_NE(wo, nullptr);
  EXPECT_EQ(iorelay_read(wo, buf, 1), -EBADF);
  EXPECT_EQ(iorelay_close(wo), 0);
}

TEST_F(ClientDaemon, EightThreadsWriteDisjointRanges) {
  iorelay_file* f = Open("/fwd/par", O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_NE(f, nullptr);
  constexpr int kThreads = 8, kBlocks = 100, kBlock = 4096;
  std::vector<std::thread> ts;
  std::atomic<int> bad{0};
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      std::vector<char> buf(kBlock);
      for (int i = 0; i < kBlocks; ++i) {
        std::memset(buf.data(), 'A' + (t * kBlocks + i) % 26, kBlock);
        off_t off = static_cast<off_t>(i * kThreads + t) * kBlock;  // interleaved, disjoint
        if (iorelay_pwrite(f, buf.data(), kBlock, off) != kBlock) bad++;
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(iorelay_close(f), 0);
  std::string data = ReadWholeFile(Real("par"));
  ASSERT_EQ(data.size(), size_t{kThreads} * kBlocks * kBlock);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kBlocks; ++i) {
      size_t off = static_cast<size_t>(i * kThreads + t) * kBlock;
      char want = static_cast<char>('A' + (t * kBlocks + i) % 26);
      ASSERT_EQ(data.find_first_not_of(want, off),
                off + kBlock == data.size() ? std::string::npos : off + kBlock)
          << "thread " << t << " block " << i;
    }
  }
}

TEST_F(ClientDaemon, LargeTransfersAreSplitAndComplete) {
  iorelay_file* f = Open("/fwd/big", O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_NE(f, nullptr);
  std::vector<char> out(80 << 20), in(80 << 20);  // larger than the protocol's 64 MiB limit
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(i * 7 + (i >> 20));
  EXPECT_EQ(iorelay_pwrite(f, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
  EXPECT_EQ(iorelay_pread(f, in.data(), in.size(), 0), static_cast<ssize_t>(in.size()));
  EXPECT_TRUE(in == out);
  EXPECT_EQ(iorelay_close(f), 0);
}

class ClientDaemonFast : public ClientDaemon {
 protected:
  ClientDaemonFast() { timeout_ms_ = 1000; }
};

TEST_F(ClientDaemonFast, StoppedDaemonGivesEioWithinTheBound) {
  iorelay_file* f = Open("/fwd/s", O_RDWR | O_CREAT);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(d_->Stop());
  auto t0 = Clock::now();
  EXPECT_EQ(iorelay_pwrite(f, "x", 1, 0), -EIO);
  EXPECT_LT(Since(t0), 3.0);
  d_->Signal(SIGCONT);
  iorelay_close(f);
}

TEST_F(ClientDaemonFast, KilledDaemonGivesEioPromptlyAndRestartServesNewOpens) {
  iorelay_file* f = Open("/fwd/k", O_RDWR | O_CREAT);
  ASSERT_NE(f, nullptr);
  d_->Kill();
  auto t0 = Clock::now();
  EXPECT_EQ(iorelay_pwrite(f, "x", 1, 0), -EIO);
  EXPECT_EQ(iorelay_pwrite(f, "x", 1, 0), -EIO);
  int rc;
  EXPECT_EQ(Open("/fwd/k2", O_RDWR | O_CREAT, &rc), nullptr);
  EXPECT_EQ(rc, -EIO);
  EXPECT_LT(Since(t0), 0.5);
  ASSERT_TRUE(d_->Start());
  EXPECT_EQ(iorelay_pwrite(f, "x", 1, 0), -EIO);  // the old handle died with the daemon
  iorelay_file* g = Open("/fwd/k3", O_RDWR | O_CREAT, &rc);
  ASSERT_NE(g, nullptr) << strerror(-rc);
  EXPECT_EQ(iorelay_pwrite(g, "new", 3, 0), 3);
  EXPECT_EQ(ReadWholeFile(Real("k3")), "new");
  iorelay_close(g);
  iorelay_close(f);
}

TEST_F(ClientDaemon, WrongSecretGivesEacces) {
  std::string other = d_->dir() + "/other";
  std::ofstream(other) << std::string(64, 'f') << "\n";
  chmod(other.c_str(), 0600);
  setenv("IORELAY_SECRET_FILE", other.c_str(), 1);
  int err = 0;
  iorelay_client* c = iorelay_client_from_env(&err);
  ASSERT_NE(c, nullptr);
  iorelay_file* f = nullptr;
  EXPECT_EQ(iorelay_open(c, "/fwd/x", O_RDWR | O_CREAT, 0644, &f), -EACCES);
  iorelay_client_destroy(c);
  chmod(other.c_str(), 0644);  // readable by others: refused before any connection
  EXPECT_EQ(iorelay_client_from_env(&err), nullptr);
  EXPECT_EQ(err, -EACCES);
}

// Runs `body` in a forked child (iorelay_before_fork in the parent, then
// iorelay_after_fork_child in the child, as the interposer's atfork handlers do); returns its
// exit status.
template <class Body>
int InChild(iorelay_client* c, Body body) {
  iorelay_before_fork(c);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    _exit(iorelay_after_fork_child(c) != 0 ? 100 : body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

TEST_F(ClientDaemon, ForkChildSharesOffsetsWithParent) {
  iorelay_file* f = Open("/fwd/fork", O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(iorelay_write(f, "abc", 3), 3);
  EXPECT_EQ(InChild(c_, [&] { return iorelay_write(f, "def", 3) == 3 ? 0 : 1; }), 0);
  EXPECT_EQ(iorelay_write(f, "ghi", 3), 3);
  EXPECT_EQ(ReadWholeFile(Real("fork")), "abcdefghi");
  EXPECT_EQ(iorelay_close(f), 0);
}

// The parent closes its copy before the child has adopted it (the child waits for that): the
// child's copy stays open, as a forked child's descriptor outlives the parent's close.
TEST_F(ClientDaemon, AForkChildKeepsTheFileWhenTheParentClosesFirst) {
  iorelay_file* f = Open("/fwd/parent-closes", O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(iorelay_write(f, "abc", 3), 3);
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  iorelay_before_fork(c_);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    char byte;
    if (::read(go[0], &byte, 1) != 1) _exit(101);
    if (iorelay_after_fork_child(c_) != 0) _exit(100);
    const bool ok = iorelay_write(f, "def", 3) == 3 && iorelay_close(f) == 0;
    _exit(ok ? 0 : 1);
  }
  ASSERT_GT(pid, 0);
  EXPECT_EQ(iorelay_close(f), 0);
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ::close(go[0]);
  ::close(go[1]);
  EXPECT_EQ(ReadWholeFile(Real("parent-closes")), "abcdef");
}

// Requests of `op` ("write", "lseek", ...) daemon 0 has received, from its stats JSON.
uint64_t Requests(iorelay_client* c, const std::string& op) {
  char* json = nullptr;
  if (iorelay_stats_json(c, 0, &json) != 0) return UINT64_MAX;
  nlohmann::json by_op = nlohmann::json::parse(json)["total"]["by_op"];
  std::free(json);
  return by_op.contains(op) ? by_op[op].get<uint64_t>() : 0;
}

TEST_F(ClientDaemon, WritesAtTheFileOffsetGoOutPositionalAndSeeksAreLocal) {
  iorelay_file* f = Open("/fwd/held", O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_NE(f, nullptr);
  const uint64_t lseeks = Requests(c_, "lseek"), writes = Requests(c_, "write");
  ASSERT_EQ(iorelay_write(f, "abc", 3), 3);
  EXPECT_EQ(iorelay_lseek(f, 0, SEEK_CUR), 3);
  EXPECT_EQ(iorelay_lseek(f, 10, SEEK_SET), 10);  // past EOF: a hole
  ASSERT_EQ(iorelay_write(f, "xyz", 3), 3);
  EXPECT_EQ(iorelay_lseek(f, -6, SEEK_CUR), 7);
  EXPECT_EQ(iorelay_lseek(f, -8, SEEK_CUR), -EINVAL);
  EXPECT_EQ(iorelay_lseek(f, 0, SEEK_END), 13);  // asks the daemon
  EXPECT_EQ(iorelay_lseek(f, 1, SEEK_SET), 1);
  char buf[8] = {};
  EXPECT_EQ(iorelay_read(f, buf, 4), 4);
  EXPECT_EQ(std::string(buf, 4), std::string("bc\0\0", 4));
  EXPECT_EQ(iorelay_lseek(f, 0, SEEK_CUR), 5);
  EXPECT_EQ(ReadWholeFile(Real("held")), std::string("abc\0\0\0\0\0\0\0xyz", 13));
  EXPECT_EQ(Requests(c_, "lseek") - lseeks, 1u);  // SEEK_END only
  EXPECT_EQ(Requests(c_, "write") - writes, 0u);  // both were pwrites
  EXPECT_EQ(Requests(c_, "read"), 0u);
  EXPECT_EQ(iorelay_close(f), 0);
}

TEST_F(ClientDaemon, OpenFstatCloseCostOneRoundTripUntilTheFileChanges) {
  iorelay_file* w = Open("/fwd/attrs", O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(iorelay_write(w, "12345", 5), 5);
  ASSERT_EQ(iorelay_close(w), 0);  // written: waits for the daemon's answer
  const uint64_t fstats = Requests(c_, "fstat"), closes = Requests(c_, "close");

  iorelay_file* f = Open("/fwd/attrs", O_RDWR);
  ASSERT_NE(f, nullptr);
  struct stat st {
  }, real{};
  ASSERT_EQ(iorelay_fstat(f, &st), 0);  // from the open reply
  ASSERT_EQ(stat(Real("attrs").c_str(), &real), 0);
  EXPECT_EQ(st.st_size, 5);
  EXPECT_EQ(st.st_ino, real.st_ino);
  EXPECT_EQ(st.st_mtim.tv_nsec, real.st_mtim.tv_nsec);
  EXPECT_EQ(Requests(c_, "fstat") - fstats, 0u);
  ASSERT_EQ(iorelay_pwrite(f, "678", 3, 5), 3);
  ASSERT_EQ(iorelay_fstat(f, &st), 0);  // changed through this description: asks the daemon
  EXPECT_EQ(st.st_size, 8);
  EXPECT_EQ(Requests(c_, "fstat") - fstats, 1u);
  ASSERT_EQ(iorelay_fsync(f, 0), 0);
  ASSERT_EQ(iorelay_close(f), 0);  // nothing written since the fsync: not awaited
  // The posted close reaches the daemon all the same.
  for (int i = 0; i < 1000 && Requests(c_, "close") - closes < 1; ++i) usleep(10'000);
  EXPECT_EQ(Requests(c_, "close") - closes, 1u);
}

TEST_F(ClientDaemon, LargeTransfersGoOutInPipelinedPiecesAndComeBackWhole) {
  iorelay_file* f = Open("/fwd/big", O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_NE(f, nullptr);
  constexpr size_t kBytes = (19u << 19) + 4096;  // 9.5 MiB and a page: 10 pieces
  std::string data(kBytes, '\0');
  for (size_t i = 0; i < kBytes; ++i) data[i] = static_cast<char>(i * 2654435761u >> 24);
  // (Over shared memory, pieces may go through its pipes, as kPwritePiped and kPreadPiped.)
  auto pwrite = [&] { return Requests(c_, "pwrite") + Requests(c_, "pwrite_piped"); };
  auto pread = [&] { return Requests(c_, "pread") + Requests(c_, "pread_piped"); };
  const uint64_t pwrites = pwrite(), preads = pread();
  ASSERT_EQ(iorelay_pwrite(f, data.data(), kBytes, 4096), static_cast<ssize_t>(kBytes));
  EXPECT_EQ(pwrite() - pwrites, 10u);
  std::string back(kBytes + 100, 'x');
  // Asking past the end: the last piece comes back short, the call returns what exists.
  ASSERT_EQ(iorelay_pread(f, back.data(), back.size(), 4096), static_cast<ssize_t>(kBytes));
  EXPECT_EQ(pread() - preads, 10u);
  EXPECT_TRUE(back.compare(0, kBytes, data) == 0);
  EXPECT_EQ(ReadWholeFile(Real("big")).substr(4096), data);
  EXPECT_EQ(iorelay_close(f), 0);
}

// A daemon killed while a pipelined write is under way: the call returns EIO or the count of a
// prefix of whole pieces, and every acknowledged byte is in the file.
TEST_F(ClientDaemonFast, DaemonKilledMidPipelinedWriteLosesNothingAcknowledged) {
  iorelay_client_destroy(c_);
  c_ = nullptr;
  d_ = std::make_unique<DaemonProcess>();
  // Each backend call takes 200 ms; with 4 pieces in flight on the daemon's 4 workers the 16
  // pieces need 800 ms, so the kill at 300 ms lands mid-transfer.
  ASSERT_TRUE(d_->Start({"--delay-us", "200000"}));
  d_->ExportClientEnv(timeout_ms_);
  int err = 0;
  c_ = iorelay_client_from_env(&err);
  ASSERT_NE(c_, nullptr);
  iorelay_file* f = Open("/fwd/cut", O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_NE(f, nullptr);
  constexpr size_t kBytes = 16u << 20;
  std::string data(kBytes, 'q');
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    d_->Kill();
  });
  const ssize_t n = iorelay_pwrite(f, data.data(), kBytes, 0);
  killer.join();
  if (n != -EIO) {
    ASSERT_GT(n, 0);
    EXPECT_LT(static_cast<size_t>(n), kBytes);
    EXPECT_EQ(static_cast<size_t>(n) % (1u << 20), 0u);
    const std::string on_disk = ReadWholeFile(Real("cut"));
    ASSERT_GE(on_disk.size(), static_cast<size_t>(n));
    EXPECT_EQ(on_disk.substr(0, n), data.substr(0, n));
  }
  iorelay_close(f);
}

TEST_F(ClientDaemon, SubmittedRequestsAreInFlightTogetherAndCompleteInAnyOrder) {
  iorelay_file* f = Open("/fwd/aio", O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_NE(f, nullptr);
  constexpr int kDepth = 16;
  constexpr size_t kBytes = 4096;
  std::vector<std::string> blocks;
  for (int i = 0; i < kDepth; ++i) blocks.emplace_back(kBytes, static_cast<char>('a' + i));
  std::vector<iorelay_request*> writes(kDepth);
  for (int i = 0; i < kDepth; ++i) {
    ASSERT_EQ(iorelay_submit_pwrite(f, blocks[i].data(), kBytes, i * kBytes, &writes[i]), 0);
  }
  for (int i = kDepth - 1; i >= 0; --i) {  // taken in reverse order
    EXPECT_EQ(iorelay_request_wait(writes[i]), static_cast<ssize_t>(kBytes)) << i;
  }
  std::vector<std::string> back(kDepth, std::string(kBytes, '?'));
  std::vector<iorelay_request*> reads(kDepth);
  for (int i = 0; i < kDepth; ++i) {
    ASSERT_EQ(iorelay_submit_pread(f, back[i].data(), kBytes, i * kBytes, &reads[i]), 0);
  }
  for (int i = 0; i < kDepth; ++i) {
    for (int spin = 0; spin < 5000 && !iorelay_request_ready(reads[i]); ++spin) usleep(1000);
    EXPECT_EQ(iorelay_request_ready(reads[i]), 1);
    EXPECT_EQ(iorelay_request_wait(reads[i]), static_cast<ssize_t>(kBytes));
    EXPECT_EQ(back[i], blocks[i]) << i;
  }
  iorelay_request* past_end = nullptr;
  char one[16];
  ASSERT_EQ(iorelay_submit_pread(f, one, sizeof one, kDepth * kBytes, &past_end), 0);
  EXPECT_EQ(iorelay_request_wait(past_end), 0);  // EOF
  EXPECT_EQ(iorelay_close(f), 0);
}

TEST_F(ClientDaemon, LongListingsComeInBoundedPages) {
  const std::string dir = Real("many");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  constexpr int kFiles = 10'000;  // more than two pages of kReaddirPageEntries
  for (int i = 0; i < kFiles; ++i) {
    std::ofstream(dir + "/file-with-a-longish-name-" + std::to_string(i)) << "";
  }
  const uint64_t readdirs = Requests(c_, "readdir");
  iorelay_dir* d = nullptr;
  ASSERT_EQ(iorelay_opendir(c_, "/fwd/many", &d), 0);
  std::set<std::string> names;
  while (const iorelay_dirent* e = iorelay_readdir(d)) names.insert(e->name);
  iorelay_closedir(d);
  EXPECT_EQ(names.size(), size_t{kFiles + 2});  // every entry once, "." and ".." included
  EXPECT_TRUE(names.count("file-with-a-longish-name-9999"));
  EXPECT_EQ(Requests(c_, "readdir") - readdirs, 3u);  // 4096 + 4096 + 1810
}

TEST_F(ClientDaemon, ListingPositionsNameTheSameEntriesAcrossPages) {
  const std::string dir = Real("pages");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  constexpr size_t kFiles = 9'000;  // pages of 4096, 4096 and 810 with "." and ".."
  for (size_t i = 0; i < kFiles; ++i) std::ofstream(dir + "/f" + std::to_string(i)) << "";
  iorelay_dir* d = nullptr;
  ASSERT_EQ(iorelay_opendir(c_, "/fwd/pages", &d), 0);
  std::vector<uint64_t> positions;
  std::vector<std::string> order;
  const iorelay_dirent* e = nullptr;
  for (;;) {
    positions.push_back(iorelay_telldir(d));
    const int rc = iorelay_readdir_next(d, &e);
    ASSERT_GE(rc, 0);
    if (rc == 0) break;
    order.push_back(e->name);
  }
  ASSERT_EQ(order.size(), kFiles + 2);
  auto entry_at = [&](size_t i) {
    iorelay_seekdir(d, positions[i]);
    return iorelay_readdir_next(d, &e) == 1 ? std::string(e->name) : std::string("(none)");
  };
  const uint64_t readdirs = Requests(c_, "readdir");
  EXPECT_EQ(entry_at(9'000), order[9'000]);  // in the page held: no request
  EXPECT_EQ(Requests(c_, "readdir") - readdirs, 0u);
  EXPECT_EQ(entry_at(5), order[5]);
  EXPECT_EQ(entry_at(4'095), order[4'095]);   // the first page's last, held
  EXPECT_EQ(iorelay_readdir_next(d, &e), 1);  // on into the second page
  EXPECT_EQ(e->name, order[4'096]);
  EXPECT_EQ(Requests(c_, "readdir") - readdirs, 2u);
  iorelay_seekdir(d, uint64_t{7} << 32);  // no such page: ignored
  EXPECT_EQ(iorelay_readdir_next(d, &e), 1);
  EXPECT_EQ(e->name, order[4'097]);
  iorelay_rewinddir(d);  // fetched again, as the directory is now
  EXPECT_EQ(iorelay_readdir_next(d, &e), 1);
  EXPECT_EQ(e->name, order[0]);
  EXPECT_EQ(Requests(c_, "readdir") - readdirs, 3u);
  iorelay_closedir(d);
}

TEST_F(ClientDaemon, AppendWritesStayWithTheDaemon) {
  iorelay_file* a = Open("/fwd/app", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND);
  iorelay_file* b = Open("/fwd/app", O_WRONLY | O_APPEND);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(iorelay_write(a, "11", 2), 2);
  ASSERT_EQ(iorelay_write(b, "22", 2), 2);
  ASSERT_EQ(iorelay_write(a, "33", 2), 2);
  EXPECT_EQ(ReadWholeFile(Real("app")), "112233");
  // O_APPEND set later by fcntl: the held offset moves to the daemon first.
  iorelay_file* c = Open("/fwd/app", O_WRONLY);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(iorelay_write(c, "ab", 2), 2);
  ASSERT_EQ(iorelay_setfl(c, O_APPEND), 0);
  ASSERT_EQ(iorelay_write(c, "44", 2), 2);
  EXPECT_EQ(ReadWholeFile(Real("app")), "ab223344");
  for (iorelay_file* f : {a, b, c}) EXPECT_EQ(iorelay_close(f), 0);
}

TEST_F(ClientDaemon, ForkedHoldersOfOneDescriptionAlternateOnItsOffset) {
  iorelay_file* f = Open("/fwd/turns", O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(iorelay_write(f, "P0", 2), 2);
  int to_child[2], to_parent[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(to_parent), 0);
  iorelay_before_fork(c_);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    if (iorelay_after_fork_child(c_) != 0) _exit(100);
    char t;
    for (int i = 1; i <= 3; ++i) {
      if (read(to_child[0], &t, 1) != 1) _exit(101);
      const std::string s = "C" + std::to_string(i);
      if (iorelay_write(f, s.data(), 2) != 2) _exit(102);
      if (write(to_parent[1], "t", 1) != 1) _exit(103);
    }
    _exit(0);
  }
  char t;
  for (int i = 1; i <= 3; ++i) {
    ASSERT_EQ(write(to_child[1], "t", 1), 1);
    ASSERT_EQ(read(to_parent[0], &t, 1), 1);
    const std::string s = "P" + std::to_string(i);
    ASSERT_EQ(iorelay_write(f, s.data(), 2), 2);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(ReadWholeFile(Real("turns")), "P0C1P1C2P2C3P3");
  EXPECT_EQ(iorelay_lseek(f, 0, SEEK_CUR), 14);
  for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]}) close(fd);
  EXPECT_EQ(iorelay_close(f), 0);
}

TEST_F(ClientDaemon, TheOffsetComesBackToTheClientOnceTheForkedSharerIsGone) {
  iorelay_file* f = Open("/fwd/back", O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(iorelay_write(f, "abc", 3), 3);
  EXPECT_EQ(InChild(c_, [&] { return iorelay_write(f, "def", 3) == 3 ? 0 : 1; }), 0);
  // The child's session ends once the daemon has seen its connections close; until then each
  // lseek asks the daemon, and the one that hears "sole" takes the offset back.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    const uint64_t before = Requests(c_, "lseek");
    ASSERT_EQ(iorelay_lseek(f, 0, SEEK_CUR), 6);
    if (Requests(c_, "lseek") == before) break;  // answered locally: the client holds it
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the offset never came back";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const uint64_t writes = Requests(c_, "write");
  for (int i = 0; i < 40; ++i) ASSERT_EQ(iorelay_write(f, "g", 1), 1);
  EXPECT_EQ(Requests(c_, "write"), writes) << "positional again";
  EXPECT_EQ(ReadWholeFile(Real("back")), "abcdef" + std::string(40, 'g'));
  EXPECT_EQ(iorelay_close(f), 0);
}

TEST_F(ClientDaemon, ThreadsSharingADescriptionSerialiseOnItsOffset) {
  iorelay_file* f = Open("/fwd/threads", O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_NE(f, nullptr);
  constexpr int kThreads = 4, kWrites = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([f, t] {
      const std::string line = std::string(7, static_cast<char>('a' + t)) + "\n";
      for (int i = 0; i < kWrites; ++i) ASSERT_EQ(iorelay_write(f, line.data(), 8), 8);
    });
  }
  for (std::thread& t : threads) t.join();
  const std::string all = ReadWholeFile(Real("threads"));
  ASSERT_EQ(all.size(), size_t{kThreads * kWrites * 8});
  for (size_t i = 0; i < all.size(); i += 8) {  // no write overwrote or tore another
    EXPECT_EQ(all.substr(i, 7), std::string(7, all[i])) << i;
  }
  EXPECT_EQ(iorelay_close(f), 0);
}

// Ranges past the largest offset are refused before any arithmetic overflows (it was
// undefined behaviour in the client) or an empty range reaches the daemon's lock table.
TEST_F(ClientDaemon, LockRangesThatOverflowAreRefused) {
  iorelay_file* f = Open("/fwd/lk-overflow", O_RDWR | O_CREAT);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(iorelay_pwrite(f, "0123456789", 10, 0), 10);
  struct flock lk {};
  lk.l_type = F_WRLCK;
  lk.l_whence = SEEK_END;
  lk.l_start = std::numeric_limits<off_t>::max();  // 10 + INT64_MAX
  EXPECT_EQ(iorelay_lock(f, F_SETLK, &lk), -EOVERFLOW);
  lk.l_whence = SEEK_SET;
  lk.l_len = std::numeric_limits<off_t>::min();
  lk.l_start = 0;
  EXPECT_EQ(iorelay_lock(f, F_SETLK, &lk), -EINVAL);
  lk.l_start = std::numeric_limits<off_t>::max();  // [INT64_MAX, EOF): nothing to lock
  lk.l_len = 0;
  EXPECT_EQ(iorelay_lock(f, F_SETLK, &lk), -EOVERFLOW);
  EXPECT_EQ(iorelay_close(f), 0);
}

TEST_F(ClientDaemon, ClosingAnyDescriptorReleasesTheProcessLocks) {
  iorelay_file* f = Open("/fwd/lk", O_RDWR | O_CREAT);
  iorelay_file* g = Open("/fwd/lk", O_RDWR);
  ASSERT_TRUE(f && g);
  struct flock lk {};
  lk.l_type = F_WRLCK;
  ASSERT_EQ(iorelay_lock(f, F_SETLK, &lk), 0);
  pid_t parent = getpid();
  auto probe = [&](short want) {
    return [&, want] {
      struct flock q {};
      q.l_type = F_WRLCK;
      if (iorelay_lock(f, F_GETLK, &q) != 0) return 2;
      if (q.l_type != want) return 3;
      if (want == F_WRLCK && q.l_pid != parent) return 4;
      return 0;
    };
  };
  EXPECT_EQ(InChild(c_, probe(F_WRLCK)), 0);
  EXPECT_EQ(iorelay_close(g), 0);  // another description of the same file
  EXPECT_EQ(InChild(c_, probe(F_UNLCK)), 0);
  EXPECT_EQ(iorelay_close(f), 0);
}

TEST_F(ClientDaemonFast, DirectFallbackKeepsTheFileGoing) {
  setenv("IORELAY_FALLBACK", "direct", 1);
  setenv("IORELAY_DIRECT_ROOT", ("/fwd=" + d_->root()).c_str(), 1);
  int err;
  iorelay_client* c = iorelay_client_from_env(&err);
  ASSERT_NE(c, nullptr);
  iorelay_file* f = nullptr;
  ASSERT_EQ(iorelay_open(c, "/fwd/fb", O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  EXPECT_EQ(iorelay_write(f, "hello", 5), 5);
  d_->Kill();
  EXPECT_EQ(iorelay_write(f, " world", 6), 6);
  EXPECT_EQ(ReadWholeFile(Real("fb")), "hello world");
  iorelay_file* g = nullptr;
  ASSERT_EQ(iorelay_open(c, "/fwd/fb2", O_RDWR | O_CREAT, 0644, &g), 0);
  EXPECT_EQ(iorelay_pwrite(g, "direct", 6, 0), 6);
  EXPECT_EQ(ReadWholeFile(Real("fb2")), "direct");
  EXPECT_EQ(iorelay_close(g), 0);
  EXPECT_EQ(iorelay_close(f), 0);
  iorelay_client_destroy(c);
}

TEST_F(ClientDaemonFast, BlockingLockOutlivesTheLivenessBound) {
  iorelay_file* f = Open("/fwd/w", O_RDWR | O_CREAT);
  ASSERT_NE(f, nullptr);
  struct flock lk {};
  lk.l_type = F_WRLCK;
  ASSERT_EQ(iorelay_lock(f, F_SETLK, &lk), 0);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    if (iorelay_after_fork_child(c_) != 0) _exit(100);
    struct flock w {};
    w.l_type = F_WRLCK;
    auto t0 = Clock::now();
    if (::write(ready[1], "r", 1) != 1) _exit(101);  // (the parent's 2 s start now)
    int rc = iorelay_lock(f, F_SETLKW, &w);          // waits ~2 s: twice the 1 s liveness bound
    _exit(rc == 0 && Since(t0) > 1.5 ? 0 : 1);
  }
  char r = 0;
  ASSERT_EQ(::read(ready[0], &r, 1), 1);
  ::close(ready[0]);
  ::close(ready[1]);
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  EXPECT_EQ(iorelay_close(f), 0);  // releases the lock; the child gets it
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(ClientDaemon, InternalDescriptorsAreHighAndMovable) {
  iorelay_file* f = Open("/fwd/m", O_RDWR | O_CREAT);
  ASSERT_NE(f, nullptr);
  int internal = -1;
  for (int fd = 0; fd < (1 << 20) && internal < 0; ++fd) {
    if (iorelay_is_internal_fd(c_, fd)) internal = fd;
  }
  ASSERT_GE(internal, 512);
  EXPECT_EQ(iorelay_is_internal_fd(c_, 0), 0);
  EXPECT_EQ(iorelay_move_internal_fd(c_, internal), 0);
  EXPECT_EQ(iorelay_is_internal_fd(c_, internal), 0);
  EXPECT_EQ(fcntl(internal, F_GETFD), -1);  // free for the application
  EXPECT_EQ(iorelay_pwrite(f, "ok", 2, 0), 2);
  EXPECT_EQ(iorelay_move_internal_fd(c_, 3), -EBADF);
  EXPECT_EQ(iorelay_close(f), 0);
}

}  // namespace
}  // namespace iorelay::client
