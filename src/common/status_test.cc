// Status and Result: the error values every layer returns.
#include "common/status.h"

#include <gtest/gtest.h>

namespace iorelay {
namespace {

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), 0);
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, CarriesErrnoAndMessage) {
  Status s = Status::FromErrno(ENOENT, "open /x");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ENOENT);
  EXPECT_EQ(s.ToString(), "open /x: No such file or directory");
}

TEST(ResultTest, HoldsValueOrStatus) {
  Result<int> good(42);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  Result<int> bad(Status::IOError("daemon gone"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), EIO);
}

Status FailsWith(int err) { return Status::FromErrno(err); }
Status Propagates(int err) {
  IORELAY_RETURN_IF_ERROR(FailsWith(err));
  return Status::Ok();
}

TEST(StatusTest, ReturnIfErrorPropagates) {
  EXPECT_EQ(Propagates(EACCES).code(), EACCES);
  EXPECT_TRUE(Propagates(0).ok());
}

}  // namespace
}  // namespace iorelay
