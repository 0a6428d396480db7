// Path resolution must never leave the export root: openat2 and the fallback walk alike.
#include "backend/beneath.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

namespace iorelay::backend {
namespace {

using OpenFn = std::function<Result<int>(int, const std::string&, int, mode_t)>;

class BeneathTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/iorelay-beneath-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    root_ = base_ + "/root";
    ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((root_ + "/dir").c_str(), 0755), 0);
    Write(root_ + "/dir/file", "inside");
    Write(base_ + "/secret", "outside");
    ASSERT_EQ(::symlink("/etc/passwd", (root_ + "/abs").c_str()), 0);
    ASSERT_EQ(::symlink("../secret", (root_ + "/out").c_str()), 0);
    ASSERT_EQ(::symlink("dir/file", (root_ + "/in").c_str()), 0);
    ASSERT_EQ(::symlink("../in", (root_ + "/dir/nested").c_str()), 0);
    root_fd_ = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(root_fd_, 0);
  }
  void TearDown() override {
    ::close(root_fd_);
    std::filesystem::remove_all(base_);
  }
  static void Write(const std::string& path, const std::string& text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
  }
  Result<int> Open(const std::string& rel, int flags = O_RDONLY, mode_t mode = 0) {
    return GetParam() ? OpenBeneathByWalk(root_fd_, rel, flags, mode)
                      : OpenBeneath(root_fd_, rel, flags, mode);
  }
  std::string ReadAll(const std::string& rel) {
    Result<int> fd = Open(rel);
    if (!fd.ok()) return "error " + std::to_string(fd.status().code());
    char buf[64];
    ssize_t n = ::read(*fd, buf, sizeof buf);
    ::close(*fd);
    return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
  }
  std::string base_, root_;
  int root_fd_ = -1;
};

TEST_P(BeneathTest, PlainAndNestedSymlinksInsideAreFine) {
  EXPECT_EQ(ReadAll("dir/file"), "inside");
  EXPECT_EQ(ReadAll("in"), "inside");
  EXPECT_EQ(ReadAll("dir/nested"), "inside");
  EXPECT_EQ(ReadAll("dir/../dir/./file"), "inside");
}

TEST_P(BeneathTest, DotDotAboveRootIsRefused) {
  EXPECT_EQ(Open("../secret").status().code(), EACCES);
  EXPECT_EQ(Open("dir/../../secret").status().code(), EACCES);
  EXPECT_EQ(Open("/etc/passwd").status().code(), EACCES);
}

TEST_P(BeneathTest, SymlinksLeavingTheRootAreRefused) {
  EXPECT_EQ(Open("abs").status().code(), EACCES);
  EXPECT_EQ(Open("out").status().code(), EACCES);
}

TEST_P(BeneathTest, CreateDoesNotEscapeThroughDanglingLink) {
  ASSERT_EQ(::symlink("../created", (root_ + "/dangling").c_str()), 0);
  EXPECT_EQ(Open("dangling", O_WRONLY | O_CREAT, 0644).status().code(), EACCES);
  EXPECT_FALSE(std::filesystem::exists(base_ + "/created"));
}

TEST_P(BeneathTest, ErrnoOfOrdinaryFailures) {
  EXPECT_EQ(Open("missing").status().code(), ENOENT);
  EXPECT_EQ(Open("dir/file/x").status().code(), ENOTDIR);
  EXPECT_EQ(Open("dir", O_WRONLY).status().code(), EISDIR);
  EXPECT_EQ(Open("dir/file", O_WRONLY | O_CREAT | O_EXCL, 0644).status().code(), EEXIST);
  EXPECT_EQ(Open("in", O_RDONLY | O_NOFOLLOW).status().code(), ELOOP);
}

TEST_P(BeneathTest, RootItself) {
  Result<int> fd = Open("", O_RDONLY | O_DIRECTORY);
  ASSERT_TRUE(fd.ok());
  ::close(*fd);
}

// A mode with flags that create nothing is ignored, as open(2) does: O_DIRECTORY (whose bit
// O_TMPFILE shares) and O_PATH open with one. O_TMPFILE still takes its mode.
TEST_P(BeneathTest, ModeWithoutCreateIsIgnored) {
  for (int flags : {O_RDONLY | O_DIRECTORY, O_PATH | O_DIRECTORY, O_PATH}) {
    Result<int> fd = Open(flags == O_PATH ? "dir/file" : "dir", flags, 0644);
    ASSERT_TRUE(fd.ok()) << std::hex << flags << ": " << fd.status().ToString();
    ::close(*fd);
  }
  Result<int> file = Open("dir/file", O_RDONLY, 0600);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ::close(*file);
  Result<int> tmp = Open("dir", O_TMPFILE | O_RDWR, 0600);
  if (!tmp.ok() && tmp.status().code() == EOPNOTSUPP) GTEST_SKIP() << "no O_TMPFILE on /tmp";
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();
  struct stat st;
  ASSERT_EQ(::fstat(*tmp, &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ::close(*tmp);
}

INSTANTIATE_TEST_SUITE_P(Openat2AndWalk, BeneathTest, ::testing::Values(false, true));

TEST(OpenParentBeneath, SplitsLastComponent) {
  int root = ::open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(root, 0);
  Result<ParentRef> ref = OpenParentBeneath(root, "name/");
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->name, "name");
  EXPECT_FALSE(ref->is_self);
  ::close(ref->fd);
  ref = OpenParentBeneath(root, "");
  ASSERT_TRUE(ref.ok());
  EXPECT_TRUE(ref->is_self);
  ::close(ref->fd);
  EXPECT_EQ(OpenParentBeneath(root, "..").status().code(), EACCES);
  // Regression: "..\0" was compared as a name of three bytes and opened as "..".
  const std::string dotdot_nul("..\0", 3);
  EXPECT_EQ(OpenParentBeneath(root, dotdot_nul).status().code(), EINVAL);
  EXPECT_EQ(OpenBeneath(root, dotdot_nul, O_RDONLY, 0).status().code(), EINVAL);
  EXPECT_EQ(OpenBeneathByWalk(root, std::string("a\0b", 3), O_RDONLY, 0).status().code(), EINVAL);
  ::close(root);
}

}  // namespace
}  // namespace iorelay::backend
