// Write-behind's ranges: a write joins what it overlaps or touches, the latest bytes win, the
// bounds count the request's table, and Take hands the ranges out by offset.
#include "client/write_ranges.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace iorelay::client {
namespace {

void Put(WriteRanges& w, int64_t at, const std::string& s) {
  struct iovec v {
    const_cast<char*>(s.data()), s.size()
  };
  w.Add(at, &v, 1, s.size());
}

std::string Str(const WriteRanges::Range& r) { return std::string(r.data.begin(), r.data.end()); }

TEST(WriteRanges, DisjointWritesStaySeparateAndComeOutByOffset) {
  WriteRanges w;
  Put(w, 100, "cc");
  Put(w, 0, "aa");
  Put(w, 10, "bb");
  EXPECT_EQ(w.count(), 3u);
  EXPECT_EQ(w.bytes(), 6u);
  EXPECT_EQ(w.WireBytes(), 6u + 3 * WriteRanges::kEntryBytes);
  EXPECT_EQ(w.first(), 0);
  EXPECT_EQ(w.last_end(), 102);
  std::vector<WriteRanges::Range> out = w.Take();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].at, 0);
  EXPECT_EQ(Str(out[1]), "bb");
  EXPECT_EQ(out[2].at, 100);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(w.bytes(), 0u);
}

TEST(WriteRanges, TouchingWritesJoinAndTheLatestBytesWin) {
  WriteRanges w;
  Put(w, 0, "aaaa");
  Put(w, 4, "bbbb");   // appends
  Put(w, 2, "XY");     // overwrites inside
  Put(w, 12, "dddd");  // apart
  Put(w, 8, "cccc");   // touches both: one range
  ASSERT_EQ(w.count(), 1u);
  EXPECT_EQ(w.bytes(), 16u);
  EXPECT_EQ(w.WireBytes(), 16u);  // one range: a plain pwrite, no table
  std::vector<WriteRanges::Range> out = w.Take();
  EXPECT_EQ(Str(out[0]), "aaXYbbbbccccdddd");
}

TEST(WriteRanges, AWriteOverSeveralRangesAndTheGapsReplacesThem) {
  WriteRanges w;
  Put(w, 2, "aa");
  Put(w, 6, "bb");
  Put(w, 12, "cc");
  Put(w, 20, "zz");
  Put(w, 0, "0123456789ABC");  // [0, 13): over the first two, and the third's first byte
  ASSERT_EQ(w.count(), 2u);
  EXPECT_EQ(w.bytes(), 16u);
  std::vector<WriteRanges::Range> out = w.Take();
  EXPECT_EQ(Str(out[0]), "0123456789ABCc");
  EXPECT_EQ(Str(out[1]), "zz");
}

TEST(WriteRanges, AWriteStartingBeforeARangeAndEndingInsideIt) {
  WriteRanges w;
  Put(w, 4, "bbbbbb");
  Put(w, 1, "AAAAA");  // [1, 6)
  std::vector<WriteRanges::Range> out = w.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].at, 1);
  EXPECT_EQ(Str(out[0]), "AAAAAbbbb");
}

TEST(WriteRanges, VectorWritesAreCopiedInOrder) {
  WriteRanges w;
  std::string a = "abc", b = "", c = "def";
  struct iovec v[3] = {{a.data(), a.size()}, {b.data(), 0}, {c.data(), c.size()}};
  w.Add(7, v, 3, 6);
  Put(w, 9, "Z");  // over the first piece's end
  std::vector<WriteRanges::Range> out = w.Take();
  EXPECT_EQ(out[0].at, 7);
  EXPECT_EQ(Str(out[0]), "abZdef");
}

TEST(WriteRanges, BoundsCountRangesAndTableBytes) {
  WriteRanges w;
  EXPECT_TRUE(w.Fits(100, 116, 1));
  EXPECT_FALSE(w.Fits(101, 116, 1));
  Put(w, 0, std::string(50, 'x'));
  Put(w, 100, std::string(50, 'y'));
  EXPECT_FALSE(w.Fits(1, 1 << 20, 2));  // a third range
  EXPECT_TRUE(w.Fits(1, 1 << 20, 3));
  EXPECT_FALSE(w.Fits(1, 100 + 2 * 16 + 16, 3));  // 133 bytes on the wire
  EXPECT_TRUE(w.Fits(1, 100 + 2 * 16 + 16 + 1, 3));
}

TEST(WriteRanges, ARecycledBufferIsReused) {
  WriteRanges w;
  std::vector<uint8_t> big;
  big.reserve(1 << 16);
  const uint8_t* storage = big.data();
  w.Recycle(std::move(big));
  Put(w, 0, "abc");
  std::vector<WriteRanges::Range> out = w.Take();
  EXPECT_EQ(out[0].data.data(), storage);
  EXPECT_EQ(Str(out[0]), "abc");
}

}  // namespace
}  // namespace iorelay::client
