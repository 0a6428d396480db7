// The C API reports the version of the VERSION file, the one source CMake and Python share.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "iorelay/iorelay.h"

TEST(Version, CApiMatchesVersionFile) {
  std::ifstream in(IORELAY_SOURCE_DIR "/VERSION");
  std::string expected;
  ASSERT_TRUE(std::getline(in, expected));
  EXPECT_EQ(std::string(iorelay_version()), expected);
  EXPECT_EQ(std::string(IORELAY_VERSION), expected);
}
