// A listing's attributes answer a stat only while fresh, unchanged by this process, and (for a
// stat that follows links) not of a symbolic link.
#include "client/listed_attrs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "client/client.h"

namespace iorelay::client {
namespace {

proto::DirEntry Entry(std::string name, uint32_t mode, uint64_t size) {
  proto::DirEntry e;
  e.name = std::move(name);
  e.has_attrs = 1;
  e.attrs.mode = mode;
  e.attrs.size = size;
  return e;
}

TEST(ListedAttrs, AnswerWhileFreshAndUnchanged) {
  ListedAttrs cache;
  const proto::DirEntry page[] = {Entry("f", S_IFREG | 0644, 7), Entry("e", S_IFREG, 1)};
  cache.PutPage("/fwd/d", page, 1000, 5);
  ASSERT_TRUE(cache.Get("/fwd/d/f", false, 1000, 5).has_value());
  EXPECT_EQ(cache.Get("/fwd/d/f", true, 2000, 5)->size, 7u);
  EXPECT_EQ(cache.Get("/fwd/d/e", true, 2000, 5)->size, 1u);
  EXPECT_FALSE(cache.Get("/fwd/d/g", false, 1000, 5).has_value());
  EXPECT_FALSE(cache.Get("/fwd/f", false, 1000, 5).has_value());
  EXPECT_FALSE(cache.Get("/fwd/d/f", false, 1000, 6).has_value()) << "the process changed a file";
  EXPECT_FALSE(cache.Get("/fwd/d/f", false, 1000 + kOpenAttrsValidNs, 5).has_value());
}

TEST(ListedAttrs, ASymbolicLinkAnswersOnlyLstat) {
  ListedAttrs cache;
  const proto::DirEntry page[] = {Entry("l", S_IFLNK | 0777, 3)};
  cache.PutPage("/", page, 0, 0);
  EXPECT_TRUE(cache.Get("/l", true, 0, 0).has_value());
  EXPECT_FALSE(cache.Get("/l", false, 0, 0).has_value());
}

TEST(ListedAttrs, TheNewestListingAnswersAndDotsAndBareEntriesAreLeftOut) {
  ListedAttrs cache;
  proto::DirEntry bare = Entry("bare", S_IFREG, 0);
  bare.has_attrs = 0;
  const proto::DirEntry first[] = {Entry("f", S_IFREG, 1), Entry("..", S_IFDIR, 0), bare};
  const proto::DirEntry second[] = {Entry("f", S_IFREG, 2)};
  cache.PutPage("/fwd/d", first, 0, 0);
  cache.PutPage("/fwd/d", second, 0, 0);
  EXPECT_EQ(cache.Get("/fwd/d/f", true, 0, 0)->size, 2u);
  EXPECT_FALSE(cache.Get("/fwd/d/..", true, 0, 0).has_value());
  EXPECT_FALSE(cache.Get("/fwd/d/bare", true, 0, 0).has_value());
}

TEST(ListedAttrs, AFullCacheDropsItsOldestPages) {
  ListedAttrs cache;
  constexpr size_t kPage = 4096;
  for (size_t p = 0; p <= ListedAttrs::kMaxEntries / kPage; ++p) {
    std::vector<proto::DirEntry> page;
    for (size_t i = 0; i < kPage; ++i) page.push_back(Entry(std::to_string(p * kPage + i), 0, i));
    cache.PutPage("/fwd/big", page, 0, 0);
  }
  EXPECT_FALSE(cache.Get("/fwd/big/0", true, 0, 0).has_value());
  EXPECT_FALSE(cache.Get("/fwd/big/4095", true, 0, 0).has_value());
  EXPECT_TRUE(cache.Get("/fwd/big/4096", true, 0, 0).has_value());
  EXPECT_TRUE(cache.Get("/fwd/big/" + std::to_string(ListedAttrs::kMaxEntries), true, 0, 0));
}

}  // namespace
}  // namespace iorelay::client
