// ResolveUpstreamPath against the kernel on one tree (issue 45, finding 7): the relay used to
// drop "name/.." lexically, so "toB/../jobA/a" missed the file the kernel opens after following
// toB. Links are read from the local tree here; relay_test checks the same through a relay.
#include "relay/upstream_path.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace iorelay::relay {
namespace {

// Links read with lstat/readlink, as upstream would answer them.
class LocalLinks final : public UpstreamLinks {
 public:
  Result<mode_t> TypeOf(const std::string& path) override {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return Status::LastError(path);
    return st.st_mode & S_IFMT;
  }
  Result<std::string> TargetOf(const std::string& path) override {
    char buf[4096];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
    if (n < 0) return Status::LastError(path);
    return std::string(buf, static_cast<size_t>(n));
  }
};

// The inode `path` opens, or -errno.
long long Opens(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  struct stat st;
  ::fstat(fd, &st);
  ::close(fd);
  return static_cast<long long>(st.st_ino);
}

class UpstreamPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/iorelay-dotdot-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    MakeDotDotTree(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

 public:
  // The tree of the finding and its neighbours: toB -> d/B, so toB/.. is d.
  static void MakeDotDotTree(const std::string& root) {
    std::filesystem::create_directories(root + "/d/jobA");
    std::filesystem::create_directories(root + "/d/B");
    std::ofstream(root + "/d/jobA/a") << "a";
    std::ofstream(root + "/file") << "f";
    ASSERT_EQ(::symlink("d/B", (root + "/toB").c_str()), 0);
    ASSERT_EQ(::symlink("toB", (root + "/chain").c_str()), 0);
    ASSERT_EQ(::symlink("../B", (root + "/d/B/up").c_str()), 0);
    ASSERT_EQ(::symlink("loop", (root + "/loop").c_str()), 0);
    ASSERT_EQ(::symlink("/tmp", (root + "/abs").c_str()), 0);
  }
  static constexpr const char* kSameAsKernel[] = {
      "toB/../jobA/a",       "chain/../jobA/a",    "chain/up/../jobA/a", "toB/./../jobA/a",
      "toB/../../d/jobA/a",  "d/B/../jobA/a",      "d/jobA/a",           "toB/../jobA/../jobA/a",
      "missing/../d/jobA/a", "file/../d/jobA/a",   "loop/../d/jobA/a",   "toB/..",
      "d/../file",           "toB/up/up/../jobA/a"};
  static constexpr const char* kLeaveTheRoot[] = {"..", "toB/../../..", "abs/../tmp", "d/../../x"};

  std::string root_;
};

TEST_F(UpstreamPathTest, DotDotAfterALinkIsWhatTheKernelOpens) {
  LocalLinks links;
  for (const char* rel : kSameAsKernel) {
    const long long kernel = Opens(root_ + "/" + rel);
    Result<std::string> upstream = ResolveUpstreamPath(root_, rel, links);
    const long long relay = upstream.ok() ? Opens(*upstream) : -upstream.status().code();
    EXPECT_EQ(relay, kernel) << rel << " (kernel: "
                             << (kernel < 0 ? std::strerror(static_cast<int>(-kernel)) : "opens")
                             << "; relay: "
                             << (upstream.ok() ? *upstream : upstream.status().ToString()) << ")";
  }
}

TEST_F(UpstreamPathTest, DotDotNeverLeavesTheRoot) {
  LocalLinks links;
  for (const char* rel : kLeaveTheRoot) {
    Result<std::string> upstream = ResolveUpstreamPath(root_, rel, links);
    ASSERT_FALSE(upstream.ok()) << rel << " -> " << *upstream;
    EXPECT_EQ(upstream.status().code(), EACCES) << rel;
  }
}

// A path without ".." costs no request: upstream walks it.
TEST_F(UpstreamPathTest, PathWithoutDotDotGoesAsItIs) {
  struct Refusing final : UpstreamLinks {
    Result<mode_t> TypeOf(const std::string&) override { return Status::FromErrno(EIO); }
    Result<std::string> TargetOf(const std::string&) override { return Status::FromErrno(EIO); }
  } refusing;
  Result<std::string> p = ResolveUpstreamPath("/up", "toB/./x//y", refusing);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, "/up/toB/x/y");
  p = ResolveUpstreamPath("/up", "", refusing);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, "/up");
}

}  // namespace
}  // namespace iorelay::relay
