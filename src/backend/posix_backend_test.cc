// PosixBackend path operations give the local errno and stay beneath the root.
#include "backend/posix_backend.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "backend/null_backend.h"

namespace iorelay::backend {
namespace {

class PosixBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/iorelay-posix-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    ASSERT_EQ(::mkdir((base_ + "/root").c_str(), 0755), 0);
    root_fd_ = ::open((base_ + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(root_fd_, 0);
  }
  void TearDown() override {
    ::close(root_fd_);
    std::filesystem::remove_all(base_);
  }
  PosixBackend b_;
  std::string base_;
  int root_fd_ = -1;
};

TEST_F(PosixBackendTest, DataRoundTrip) {
  Result<int> fd = b_.Open(root_fd_, "f", O_RDWR | O_CREAT, 0644);
  ASSERT_TRUE(fd.ok());
  ASSERT_EQ(*b_.Pwrite(*fd, "hello", 5, 10), 5u);
  char buf[16] = {};
  ASSERT_EQ(*b_.Pread(*fd, buf, sizeof buf, 10), 5u);
  EXPECT_EQ(std::string(buf, 5), "hello");
  EXPECT_EQ(b_.Fstat(*fd)->st_size, 15);
  EXPECT_TRUE(b_.Ftruncate(*fd, 3).ok());
  EXPECT_EQ(b_.Stat(root_fd_, "f", false)->st_size, 3);
  EXPECT_TRUE(b_.Close(*fd).ok());
}

// Only regular files and directories open: a FIFO is ENXIO at once for readers and writers
// (a blocking open would wait for a peer, holding the thread that serves it); the caller's own
// O_NONBLOCK choice is what the opened file keeps.
TEST_F(PosixBackendTest, OpensRegularFilesAndDirectoriesOnly) {
  ASSERT_EQ(::mkfifo((base_ + "/root/fifo").c_str(), 0600), 0);
  for (int flags : {O_RDONLY, O_WRONLY, O_RDWR}) {
    Result<int> fd = b_.Open(root_fd_, "fifo", flags, 0);
    ASSERT_FALSE(fd.ok());
    EXPECT_EQ(fd.status().code(), ENXIO) << fd.status().ToString();
  }
  Result<int> plain = b_.Open(root_fd_, "f", O_RDWR | O_CREAT, 0644);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(::fcntl(*plain, F_GETFL) & O_NONBLOCK, 0);
  EXPECT_TRUE(b_.Close(*plain).ok());
  Result<int> nonblocking = b_.Open(root_fd_, "f", O_RDONLY | O_NONBLOCK, 0);
  ASSERT_TRUE(nonblocking.ok());
  EXPECT_NE(::fcntl(*nonblocking, F_GETFL) & O_NONBLOCK, 0);
  EXPECT_TRUE(b_.Close(*nonblocking).ok());
  Result<int> dir = b_.Open(root_fd_, ".", O_RDONLY | O_DIRECTORY, 0);
  ASSERT_TRUE(dir.ok());
  EXPECT_TRUE(b_.Close(*dir).ok());
}

// O_PATH opens (a handle to stat, or to resolve beneath) work, with or without a mode: no
// O_NONBLOCK is added to them, which openat2 refuses with O_PATH.
TEST_F(PosixBackendTest, OpensWithOPath) {
  Result<int> plain = b_.Open(root_fd_, "f", O_RDWR | O_CREAT, 0644);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(b_.Close(*plain).ok());
  for (mode_t mode : {0, 0644}) {
    Result<int> fd = b_.Open(root_fd_, "f", O_PATH, mode);
    ASSERT_TRUE(fd.ok()) << fd.status().ToString();
    EXPECT_EQ(b_.Fstat(*fd)->st_size, 0);
    EXPECT_NE(::fcntl(*fd, F_GETFL) & O_PATH, 0);
    EXPECT_TRUE(b_.Close(*fd).ok());
    Result<int> dir = b_.Open(root_fd_, ".", O_PATH | O_DIRECTORY, mode);
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    EXPECT_TRUE(b_.Close(*dir).ok());
    Result<int> rdir = b_.Open(root_fd_, ".", O_RDONLY | O_DIRECTORY, mode);
    ASSERT_TRUE(rdir.ok()) << rdir.status().ToString();
    EXPECT_TRUE(b_.Close(*rdir).ok());
  }
}

// The reported alignment is what the file system enforces: an O_DIRECT write at it works,
// one at half of it is refused (when the file system takes O_DIRECT at all).
TEST_F(PosixBackendTest, DirectIoAlignmentIsWhatTheFileSystemEnforces) {
  Result<int> fd = b_.Open(root_fd_, "d", O_RDWR | O_CREAT | O_DIRECT, 0644);
  if (!fd.ok() && fd.status().code() == EINVAL) GTEST_SKIP() << "no O_DIRECT on /tmp";
  ASSERT_TRUE(fd.ok());
  const uint32_t align = b_.DirectIoAlignment(*fd);
  EXPECT_GE(align, 1u);
  EXPECT_EQ(align & (align - 1), 0u) << align << " is not a power of two";
  void* buf = std::aligned_alloc(65536, 65536);
  ASSERT_NE(buf, nullptr);
  std::memset(buf, 'x', 65536);
  Result<size_t> ok = b_.Pwrite(*fd, buf, align, align);
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
  if (align >= 2) {
    Result<size_t> bad = b_.Pwrite(*fd, buf, align, align / 2);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), EINVAL);
  }
  std::free(buf);
  EXPECT_TRUE(b_.Close(*fd).ok());
}

TEST_F(PosixBackendTest, PathOpsErrno) {
  EXPECT_TRUE(b_.Mkdir(root_fd_, "d", 0755).ok());
  EXPECT_EQ(b_.Mkdir(root_fd_, "d", 0755).code(), EEXIST);
  Result<int> fd = b_.Open(root_fd_, "d/f", O_WRONLY | O_CREAT, 0644);
  ASSERT_TRUE(fd.ok());
  b_.Close(*fd);
  EXPECT_EQ(b_.Rmdir(root_fd_, "d").code(), ENOTEMPTY);
  EXPECT_EQ(b_.Unlink(root_fd_, "d").code(), EISDIR);
  EXPECT_TRUE(b_.Rename(root_fd_, "d/f", root_fd_, "g", 0).ok());
  EXPECT_EQ(b_.Unlink(root_fd_, "d/f").code(), ENOENT);
  EXPECT_TRUE(b_.Rmdir(root_fd_, "d").ok());
  EXPECT_EQ(b_.Rmdir(root_fd_, "").code(), EINVAL);
  EXPECT_TRUE(b_.Access(root_fd_, "g", F_OK).ok());
  EXPECT_EQ(b_.Access(root_fd_, "nope", F_OK).code(), ENOENT);
  ASSERT_EQ(::symlink("g", (base_ + "/root/l").c_str()), 0);
  EXPECT_EQ(*b_.Readlink(root_fd_, "l"), "g");
  EXPECT_TRUE(S_ISLNK(b_.Stat(root_fd_, "l", true)->st_mode));
  EXPECT_TRUE(S_ISREG(b_.Stat(root_fd_, "l", false)->st_mode));
  EXPECT_TRUE(b_.Truncate(root_fd_, "g", 100).ok());
  EXPECT_EQ(b_.Stat(root_fd_, "g", false)->st_size, 100);
}

TEST_F(PosixBackendTest, PathOpsRefuseEscapes) {
  EXPECT_EQ(b_.Mkdir(root_fd_, "../escaped", 0755).code(), EACCES);
  EXPECT_FALSE(std::filesystem::exists(base_ + "/escaped"));
  EXPECT_EQ(b_.Rmdir(root_fd_, "..").code(), EACCES);
  EXPECT_EQ(b_.Stat(root_fd_, "../", false).status().code(), EACCES);
  ASSERT_EQ(::symlink("/", (base_ + "/root/up").c_str()), 0);
  EXPECT_EQ(b_.Unlink(root_fd_, "up/tmp").code(), EACCES);
  // A trailing slash: lstat follows the last link (beneath the root only: "up/" is EACCES, not
  // the link's own stat); unlink does not follow it, and a link is not a directory (ENOTDIR, the
  // link kept), as the kernel answers both.
  EXPECT_EQ(b_.Stat(root_fd_, "up/", true).status().code(), EACCES);
  EXPECT_EQ(b_.Unlink(root_fd_, "up/").code(), ENOTDIR);
  ASSERT_TRUE(b_.Mkdir(root_fd_, "d", 0755).ok());
  ASSERT_EQ(::symlink("d", (base_ + "/root/in").c_str()), 0);
  EXPECT_TRUE(S_ISDIR(b_.Stat(root_fd_, "in/", true)->st_mode));
  EXPECT_TRUE(S_ISLNK(b_.Stat(root_fd_, "in", true)->st_mode));
  EXPECT_EQ(b_.Unlink(root_fd_, "in/").code(), ENOTDIR);
  EXPECT_EQ(b_.Rmdir(root_fd_, "in/").code(), ENOTDIR);
  Result<int> fd = b_.Open(root_fd_, "plain", O_WRONLY | O_CREAT, 0644);
  ASSERT_TRUE(fd.ok());
  EXPECT_TRUE(b_.Close(*fd).ok());
  ASSERT_EQ(::symlink("plain", (base_ + "/root/plain-link").c_str()), 0);
  EXPECT_EQ(b_.Unlink(root_fd_, "plain-link/").code(), ENOTDIR);
  EXPECT_EQ(b_.Stat(root_fd_, "plain-link/", true).status().code(), ENOTDIR);
  EXPECT_TRUE(std::filesystem::is_symlink(base_ + "/root/up"));
  EXPECT_TRUE(std::filesystem::is_symlink(base_ + "/root/in"));
  EXPECT_TRUE(std::filesystem::is_symlink(base_ + "/root/plain-link"));
}

TEST_F(PosixBackendTest, ModesTimesAndLinks) {
  Result<int> fd = b_.Open(root_fd_, "f", O_RDWR | O_CREAT, 0644);
  ASSERT_TRUE(fd.ok());
  EXPECT_TRUE(b_.Fchmod(*fd, 0600).ok());
  const struct timespec ts[2] = {{100, 1}, {200, 2}};
  EXPECT_TRUE(b_.Futimens(*fd, ts).ok());
  EXPECT_EQ(b_.Fstat(*fd)->st_mode & 07777, 0600u);
  EXPECT_EQ(b_.Fstat(*fd)->st_mtim.tv_sec, 200);
  EXPECT_TRUE(b_.Close(*fd).ok());

  EXPECT_TRUE(b_.Symlink("f", root_fd_, "l").ok());
  EXPECT_EQ(b_.Symlink("f", root_fd_, "l").code(), EEXIST);
  EXPECT_EQ(*b_.Readlink(root_fd_, "l"), "f");
  const struct timespec old[2] = {{50, 0}, {60, 0}};
  EXPECT_TRUE(b_.Utimens(root_fd_, "l", old, true).ok());  // the link, not its target
  EXPECT_EQ(b_.Stat(root_fd_, "l", true)->st_mtim.tv_sec, 60);
  EXPECT_EQ(b_.Stat(root_fd_, "f", false)->st_mtim.tv_sec, 200);
  EXPECT_TRUE(b_.Utimens(root_fd_, "l", old, false).ok());  // through the link
  EXPECT_EQ(b_.Stat(root_fd_, "f", false)->st_mtim.tv_sec, 60);
  ASSERT_TRUE(b_.Mkdir(root_fd_, "dir", 0755).ok());
  ASSERT_TRUE(b_.Symlink("dir", root_fd_, "ld").ok());
  const struct timespec later[2] = {{70, 0}, {80, 0}};
  EXPECT_TRUE(b_.Utimens(root_fd_, "ld/", later, true).ok());  // a trailing slash follows
  EXPECT_EQ(b_.Stat(root_fd_, "dir", false)->st_mtim.tv_sec, 80);

  EXPECT_TRUE(b_.Link(root_fd_, "l", root_fd_, "hard", true).ok());
  EXPECT_TRUE(S_ISREG(b_.Stat(root_fd_, "hard", true)->st_mode));
  EXPECT_TRUE(b_.Link(root_fd_, "l", root_fd_, "l2", false).ok());
  EXPECT_TRUE(S_ISLNK(b_.Stat(root_fd_, "l2", true)->st_mode));
  EXPECT_EQ(b_.Stat(root_fd_, "f", false)->st_nlink, 2u);
  EXPECT_EQ(b_.Link(root_fd_, "f", root_fd_, "hard", false).code(), EEXIST);
  EXPECT_EQ(b_.Link(root_fd_, "missing", root_fd_, "x", false).code(), ENOENT);
  EXPECT_EQ(b_.Link(root_fd_, "", root_fd_, "x", false).code(), EPERM);
  // A new name with a trailing slash, as Linux: EEXIST if it exists, else ENOENT.
  EXPECT_EQ(b_.Symlink("f", root_fd_, "s/").code(), ENOENT);
  EXPECT_EQ(b_.Symlink("f", root_fd_, "hard/").code(), EEXIST);
  EXPECT_EQ(b_.Link(root_fd_, "f", root_fd_, "h2/", false).code(), ENOENT);
  EXPECT_EQ(b_.Link(root_fd_, "f", root_fd_, "hard/", false).code(), EEXIST);
  EXPECT_FALSE(std::filesystem::exists(base_ + "/root/s"));
}

TEST_F(PosixBackendTest, LinksAndTimesRefuseEscapes) {
  ASSERT_EQ(::close(::open((base_ + "/outside").c_str(), O_CREAT | O_WRONLY, 0644)), 0);
  // A link naming a file outside may be stored; nothing follows it out of the root.
  EXPECT_TRUE(b_.Symlink("../outside", root_fd_, "out").ok());
  EXPECT_TRUE(b_.Symlink("/etc/passwd", root_fd_, "abs").ok());
  const struct timespec ts[2] = {{1, 0}, {1, 0}};
  EXPECT_EQ(b_.Utimens(root_fd_, "out", ts, false).code(), EACCES);
  EXPECT_EQ(b_.Utimens(root_fd_, "abs", ts, false).code(), EACCES);
  EXPECT_EQ(b_.Link(root_fd_, "out", root_fd_, "stolen", true).code(), EACCES);
  EXPECT_EQ(b_.Link(root_fd_, "../outside", root_fd_, "stolen", false).code(), EACCES);
  EXPECT_EQ(b_.Link(root_fd_, "out", root_fd_, "../escaped", false).code(), EACCES);
  EXPECT_EQ(b_.Symlink("x", root_fd_, "../escaped").code(), EACCES);
  EXPECT_FALSE(std::filesystem::exists(base_ + "/root/stolen"));
  EXPECT_FALSE(std::filesystem::exists(base_ + "/escaped"));
  struct stat st;
  ASSERT_EQ(::stat((base_ + "/outside").c_str(), &st), 0);
  EXPECT_NE(st.st_mtim.tv_sec, 1);
  EXPECT_EQ(st.st_nlink, 1u);
}

TEST(NullBackend, OpenGivesHandleReadsZeros) {
  NullBackend b;
  Result<int> fd = b.Open(-1, "whatever", O_RDWR, 0);
  ASSERT_TRUE(fd.ok());
  char buf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(*b.Pread(*fd, buf, sizeof buf, 0), 8u);
  EXPECT_EQ(buf[7], 0);
  EXPECT_EQ(*b.Pwrite(*fd, buf, 8, 0), 8u);
}

}  // namespace
}  // namespace iorelay::backend
