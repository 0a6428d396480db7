// Exports: longest-prefix mapping, and the paths refused before any file system call.
#include "daemon/exports.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace iorelay::daemon {
namespace {

TEST(ExportsTest, MapsByLongestPrefix) {
  Exports e;
  ASSERT_TRUE(e.Add("/data", "/tmp").ok());
  ASSERT_TRUE(e.Add("/data/deep/", "/").ok());
  Result<Mapped> m = e.Map("/data/x/y");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->rel, "x/y");
  m = e.Map("/data/deep//z");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->rel, "z");
  EXPECT_EQ(e.Map("/database").status().code(), EACCES);
  EXPECT_EQ(e.Map("relative").status().code(), EACCES);
}

TEST(ExportsTest, NulInPathIsEinval) {
  // Regression: stat("/fwd/..\0") returned the attributes of the export root's parent.
  Exports e;
  ASSERT_TRUE(e.Add("/data", "/tmp").ok());
  Result<Mapped> m = e.Map(std::string("/data/..\0", 9));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), EINVAL);
}

}  // namespace
}  // namespace iorelay::daemon
