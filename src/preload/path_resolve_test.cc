// Tests of lexical path normalisation.
#include "preload/path_resolve.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

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

// A tree of directories, files and symbolic links under /fwd, as a daemon would answer for it.
class FakeTree final : public PathOracle {
 public:
  std::map<std::string, std::string> links;  // path -> target
  std::set<std::string> entries;             // paths that exist and are not links
  std::vector<std::string> asked;
  long ReadLink(const char* abs, char* buf, size_t size) override {
    asked.push_back(abs);
    if (auto it = links.find(abs); it != links.end()) {
      const size_t n = std::min(size, it->second.size());
      memcpy(buf, it->second.data(), n);
      return static_cast<long>(n);
    }
    if (entries.count(abs) != 0) return -EINVAL;
    const std::string parent = std::string(abs).substr(0, std::string(abs).rfind('/'));
    return entries.count(parent) != 0 && parent.find("file") != std::string::npos ? -ENOTDIR
                                                                                  : -ENOENT;
  }
  bool InTree(const char* abs) override { return std::string(abs).rfind("/fwd", 0) == 0; }
};

std::string Canonical(FakeTree& tree, const char* path) {
  char out[256];
  const int n = CanonicalPath(path, 1, tree, out, sizeof out);
  if (n < 0) return "error " + std::to_string(-n);
  return n == kLeftTheTree ? std::string("libc ") + out : out;
}

TEST(CanonicalPath, LinksAreReplacedByTheirTargets) {
  FakeTree t;
  t.entries = {"/fwd", "/fwd/a", "/fwd/a/b", "/fwd/a/file"};
  t.links = {
      {"/fwd/lnk", "a/b"}, {"/fwd/abs", "/fwd/a"}, {"/fwd/out", "/etc"}, {"/fwd/loop", "loop"}};
  EXPECT_EQ(Canonical(t, "/fwd/lnk"), "/fwd/a/b");
  EXPECT_EQ(Canonical(t, "/fwd/lnk/../file"), "/fwd/a/file");
  EXPECT_EQ(Canonical(t, "/fwd/./abs/b/.."), "/fwd/a");
  EXPECT_EQ(Canonical(t, "/fwd/a/file"), "/fwd/a/file");
  EXPECT_EQ(Canonical(t, "/fwd"), "/fwd");
  EXPECT_EQ(Canonical(t, "/fwd/out/passwd"), "libc /etc/passwd");
  // A link last, or a link to a link out of the tree: no slash is added after the target
  // (libc would then ask for a directory); one the path itself ends in is kept.
  t.links["/fwd/py"] = "py3";
  t.links["/fwd/py3"] = "/usr/bin/python3";
  EXPECT_EQ(Canonical(t, "/fwd/out"), "libc /etc");
  EXPECT_EQ(Canonical(t, "/fwd/py"), "libc /usr/bin/python3");
  EXPECT_EQ(Canonical(t, "/fwd/out/"), "libc /etc/");
  EXPECT_EQ(Canonical(t, "/fwd/lnk/"), "/fwd/a/b");
  // A relative link to a sibling of the export leaves the tree at the prefix's own depth.
  t.links["/fwd/sib"] = "../shared";
  EXPECT_EQ(Canonical(t, "/fwd/sib/f"), "libc /shared/f");
  EXPECT_EQ(Canonical(t, "/fwd/sib"), "libc /shared");
  EXPECT_EQ(Canonical(t, "/fwd/../fwd/a"), "/fwd/a");
  EXPECT_EQ(Canonical(t, "/fwd/missing/.."), "error " + std::to_string(ENOENT));
  EXPECT_EQ(Canonical(t, "/fwd/a/file/x"), "error " + std::to_string(ENOTDIR));
  EXPECT_EQ(Canonical(t, "/fwd/loop"), "error " + std::to_string(ELOOP));
  t.asked.clear();
  Canonical(t, "/fwd/a/b");
  EXPECT_EQ(t.asked, (std::vector<std::string>{"/fwd/a", "/fwd/a/b"}));  // (not the prefix)
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
