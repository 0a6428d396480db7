// Credential files and the HMAC challenge-response.
#include "common/auth.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace iorelay {
namespace {

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/iorauthXXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string dir_;
};

TEST_F(AuthTest, CreatedSecretLoadsBack) {
  std::string path = dir_ + "/secret";
  ASSERT_TRUE(CreateSecretFile(path).ok());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  Result<Secret> s = LoadSecretFile(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
}

TEST_F(AuthTest, RefusesToOverwrite) {
  std::string path = dir_ + "/secret";
  ASSERT_TRUE(CreateSecretFile(path).ok());
  EXPECT_EQ(CreateSecretFile(path).code(), EEXIST);
}

TEST_F(AuthTest, RefusesWorldReadableFile) {
  std::string path = dir_ + "/secret";
  ASSERT_TRUE(CreateSecretFile(path).ok());
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  EXPECT_EQ(LoadSecretFile(path).status().code(), EACCES);
}

TEST_F(AuthTest, RefusesMalformedFile) {
  std::string path = dir_ + "/secret";
  std::ofstream(path) << "not hex at all\n";
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  EXPECT_EQ(LoadSecretFile(path).status().code(), EINVAL);
}

TEST(ProofTest, VerifiesOnlyWithTheSameSecretAndNonces) {
  Secret a{}, b{};
  b[0] = 1;
  Nonce sn = RandomNonce(), cn = RandomNonce();
  Proof p = ComputeProof(a, sn, cn);
  EXPECT_TRUE(VerifyProof(a, sn, cn, p));
  EXPECT_FALSE(VerifyProof(b, sn, cn, p));
  EXPECT_FALSE(VerifyProof(a, RandomNonce(), cn, p));
  EXPECT_FALSE(VerifyProof(a, sn, RandomNonce(), p));
}

TEST(ProofTest, NoncesAreFresh) { EXPECT_NE(RandomNonce(), RandomNonce()); }

}  // namespace
}  // namespace iorelay
