// A listing's attributes answer a stat only while fresh, unchanged by this process, and (for a
// stat that follows links) not of a symbolic link.
#include "client/listed_attrs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "client/client.h"

namespace iorelay::client {
namespace {

proto::WireStat Attrs(uint32_t mode, uint64_t size) {
  proto::WireStat w;
  w.mode = mode;
  w.size = size;
  return w;
}

TEST(ListedAttrs, AnswerWhileFreshAndUnchanged) {
  ListedAttrs cache;
  cache.Put("/fwd/d/f", Attrs(S_IFREG | 0644, 7), 1000, 5);
  ASSERT_TRUE(cache.Get("/fwd/d/f", false, 1000, 5).has_value());
  EXPECT_EQ(cache.Get("/fwd/d/f", true, 2000, 5)->size, 7u);
  EXPECT_FALSE(cache.Get("/fwd/d/g", false, 1000, 5).has_value());
  EXPECT_FALSE(cache.Get("/fwd/d/f", false, 1000, 6).has_value()) << "the process changed a file";
  EXPECT_FALSE(cache.Get("/fwd/d/f", false, 1000 + kOpenAttrsValidNs, 5).has_value());
}

TEST(ListedAttrs, ASymbolicLinkAnswersOnlyLstat) {
  ListedAttrs cache;
  cache.Put("/fwd/l", Attrs(S_IFLNK | 0777, 3), 0, 0);
  EXPECT_TRUE(cache.Get("/fwd/l", true, 0, 0).has_value());
  EXPECT_FALSE(cache.Get("/fwd/l", false, 0, 0).has_value());
}

TEST(ListedAttrs, AFullCacheStartsOver) {
  ListedAttrs cache;
  for (size_t i = 0; i <= ListedAttrs::kMaxEntries; ++i) {
    cache.Put("/fwd/" + std::to_string(i), Attrs(S_IFREG, i), 0, 0);
  }
  EXPECT_FALSE(cache.Get("/fwd/0", true, 0, 0).has_value());
  EXPECT_TRUE(cache.Get("/fwd/" + std::to_string(ListedAttrs::kMaxEntries), true, 0, 0));
}

}  // namespace
}  // namespace iorelay::client
