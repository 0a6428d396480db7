// Tests of the exec hand-over encoding.
#include "preload/fd_inherit.h"

#include <fcntl.h>
#include <gtest/gtest.h>

namespace iorelay::preload {
namespace {

TEST(FdInherit, RoundTrip) {
  std::vector<InheritedFd> in(2);
  in[0] = {1, true, O_WRONLY | O_APPEND, 0, "/fwd/job/log"};
  in[1] = {7, false, O_RDONLY | O_DIRECTORY, 0, "/fwd/job/dir;with,odd=chars\n"};
  in.push_back({9, true, O_RDWR, int64_t{1} << 40, "/fwd/a"});
  std::vector<InheritedFd> out;
  ASSERT_TRUE(DecodeInherited(EncodeInherited(in), &out));
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].fd, in[i].fd);
    EXPECT_EQ(out[i].is_file, in[i].is_file);
    EXPECT_EQ(out[i].flags, in[i].flags);
    EXPECT_EQ(out[i].offset, in[i].offset);
    EXPECT_EQ(out[i].path, in[i].path);
  }
}

TEST(FdInherit, EmptyIsValid) {
  std::vector<InheritedFd> out;
  EXPECT_TRUE(DecodeInherited("", &out));
  EXPECT_TRUE(out.empty());
}

TEST(FdInherit, RejectsMalformed) {
  std::vector<InheritedFd> out;
  EXPECT_FALSE(DecodeInherited("1,f,0,0", &out));      // no path
  EXPECT_FALSE(DecodeInherited("1,x,0,0,2f", &out));   // bad kind
  EXPECT_FALSE(DecodeInherited("-1,f,0,0,2f", &out));  // bad fd
  EXPECT_FALSE(DecodeInherited("1,f,0,-5,2f", &out));  // negative offset
  EXPECT_FALSE(DecodeInherited("1,f,0,0,2", &out));    // odd hex
  EXPECT_FALSE(DecodeInherited("1,f,0,0,zz", &out));   // not hex
  EXPECT_FALSE(DecodeInherited("1,f,0,0,61", &out));   // relative path "a"
  EXPECT_TRUE(DecodeInherited("1,f,0,0,2f", &out));    // "/"
}

}  // namespace
}  // namespace iorelay::preload
