// Tests of lexical path normalisation.
#include "preload/path_resolve.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace iorelay::preload {
namespace {

std::string Norm(const char* base, const char* path) {
  char out[256];
  int n = NormalizePath(base, path, out, sizeof out);
  if (n < 0) return "error " + std::to_string(-n);
  EXPECT_EQ(static_cast<size_t>(n), std::string(out).size());
  return out;
}

TEST(NormalizePath, Absolute) {
  EXPECT_EQ(Norm(nullptr, "/"), "/");
  EXPECT_EQ(Norm(nullptr, "/fwd/job/a"), "/fwd/job/a");
  EXPECT_EQ(Norm(nullptr, "//fwd///job//a/"), "/fwd/job/a");
  EXPECT_EQ(Norm(nullptr, "/fwd/./job/."), "/fwd/job");
  EXPECT_EQ(Norm("/ignored", "/fwd/job/../x"), "/fwd/x");
}

TEST(NormalizePath, DotDotStopsAtRoot) {
  EXPECT_EQ(Norm(nullptr, "/.."), "/");
  EXPECT_EQ(Norm(nullptr, "/../../fwd"), "/fwd");
  EXPECT_EQ(Norm(nullptr, "/fwd/job/../../.."), "/");
}

TEST(NormalizePath, EscapeFromPrefixIsVisible) {
  // The forwarding decision sees where the path really points, lexically.
  EXPECT_EQ(Norm(nullptr, "/fwd/job/../other/f"), "/fwd/other/f");
  EXPECT_EQ(Norm("/fwd/job", "../jobX/f"), "/fwd/jobX/f");
}

TEST(NormalizePath, RelativeAgainstBase) {
  EXPECT_EQ(Norm("/home/u", "f"), "/home/u/f");
  EXPECT_EQ(Norm("/home/u", "./a/b/../c"), "/home/u/a/c");
  EXPECT_EQ(Norm("/", "x"), "/x");
  EXPECT_EQ(Norm("/a/", "."), "/a");
  EXPECT_EQ(Norm("/a/b", ".."), "/a");
}

TEST(NormalizePath, KeptDotDotsAreLeftForTheDaemon) {
  char out[256];
  ASSERT_GT(NormalizePath(nullptr, "/fwd/lnk/../f", out, sizeof out, DotDot::kKeep), 0);
  EXPECT_STREQ(out, "/fwd/lnk/../f");
  ASSERT_GT(NormalizePath("/fwd/./job/", "./a//../b/.", out, sizeof out, DotDot::kKeep), 0);
  EXPECT_STREQ(out, "/fwd/job/a/../b");
  ASSERT_GT(NormalizePath("/fwd/lnk/..", "x", out, sizeof out, DotDot::kKeep), 0);
  EXPECT_STREQ(out, "/fwd/lnk/../x");
}

TEST(DotDotsStayBelow, CountsDepthFromTheTop) {
  EXPECT_TRUE(DotDotsStayBelow("/fwd/lnk/../f", 1));  // back at /fwd, the export's root
  EXPECT_TRUE(DotDotsStayBelow("/fwd/a/b/../../f", 1));
  EXPECT_FALSE(DotDotsStayBelow("/fwd/a/../../fwd/f", 1));  // through /, above the export
  EXPECT_FALSE(DotDotsStayBelow("/fwd/job/a/../../f", 2));
  EXPECT_TRUE(DotDotsStayBelow("/fwd/job/a/../../f", 1));
  EXPECT_TRUE(DotDotsStayBelow("/f", 0));
}

TEST(NormalizePath, Errors) {
  char out[8];
  EXPECT_EQ(NormalizePath(nullptr, "", out, sizeof out), -ENOENT);
  EXPECT_EQ(NormalizePath(nullptr, "rel", out, sizeof out), -EINVAL);
  EXPECT_EQ(NormalizePath("rel/base", "x", out, sizeof out), -EINVAL);
  EXPECT_EQ(NormalizePath(nullptr, "/abcdefgh", out, sizeof out), -ENAMETOOLONG);
  EXPECT_EQ(NormalizePath(nullptr, "/abcdef", out, sizeof out), 7);  // exactly fits
}

}  // namespace
}  // namespace iorelay::preload
