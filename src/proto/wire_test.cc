// Protocol coding: round trips, and strict rejection of malformed input.
#include "proto/wire.h"

#include <gtest/gtest.h>

#include "proto/messages.h"

namespace iorelay::proto {
namespace {

TEST(HeaderTest, RoundTrip) {
  FrameHeader h{.op = static_cast<uint16_t>(Op::kPwrite) | kReplyBit,
                .id = 0x1122334455667788,
                .length = 4096,
                .status = -5};
  uint8_t buf[kHeaderBytes];
  EncodeHeader(h, buf);
  Result<FrameHeader> d = DecodeHeader(buf);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->op, h.op);
  EXPECT_EQ(d->id, h.id);
  EXPECT_EQ(d->length, h.length);
  EXPECT_EQ(d->status, h.status);
}

TEST(HeaderTest, RejectsBadMagicVersionOpAndSize) {
  uint8_t buf[kHeaderBytes];
  FrameHeader h{.op = static_cast<uint16_t>(Op::kOpen), .id = 1, .length = 10};
  EncodeHeader(h, buf);
  uint8_t bad[kHeaderBytes];
  std::memcpy(bad, buf, sizeof buf);
  bad[0] ^= 0xff;
  EXPECT_EQ(DecodeHeader(bad).status().code(), EPROTO);
  std::memcpy(bad, buf, sizeof buf);
  bad[4] = 99;  // version
  EXPECT_EQ(DecodeHeader(bad).status().code(), EPROTO);
  h.op = 999;
  EncodeHeader(h, bad);
  EXPECT_EQ(DecodeHeader(bad).status().code(), EPROTO);
  h.op = static_cast<uint16_t>(Op::kOpen);
  h.length = kMaxPayloadBytes + 1;
  EncodeHeader(h, bad);
  EXPECT_EQ(DecodeHeader(bad).status().code(), EPROTO);
  h.length = 100;
  EncodeHeader(h, bad);
  EXPECT_EQ(DecodeHeader(bad, 99).status().code(), EPROTO);
}

TEST(FieldsTest, OpenRoundTrip) {
  OpenRequest in{.path = "/scratch/job/a", .flags = 0101, .mode = 0644};
  std::vector<uint8_t> bytes = EncodeFields(in);
  OpenRequest out;
  ASSERT_TRUE(DecodeFields(bytes, &out).ok());
  EXPECT_EQ(out.path, in.path);
  EXPECT_EQ(out.flags, in.flags);
  EXPECT_EQ(out.mode, in.mode);
}

TEST(FieldsTest, AuthRoundTrip) {
  AuthRequest in;
  in.client_nonce[3] = 7;
  in.proof[31] = 9;
  in.pid = 1234;
  in.node_id = 5;
  in.host = "node17";
  in.join_session = 3;
  in.join_token = 0xdeadbeef;
  AuthRequest out;
  ASSERT_TRUE(DecodeFields(EncodeFields(in), &out).ok());
  EXPECT_EQ(out.client_nonce, in.client_nonce);
  EXPECT_EQ(out.proof, in.proof);
  EXPECT_EQ(out.pid, 1234u);
  EXPECT_EQ(out.host, "node17");
  EXPECT_EQ(out.join_token, 0xdeadbeefu);
}

TEST(FieldsTest, ListRoundTrip) {
  ReaddirReply in;
  in.entries.push_back({.ino = 1, .type = 4, .name = "."});
  in.entries.push_back({.ino = 99, .type = 8, .name = "data.0"});
  ReaddirReply out;
  ASSERT_TRUE(DecodeFields(EncodeFields(in), &out).ok());
  ASSERT_EQ(out.entries.size(), 2u);
  EXPECT_EQ(out.entries[1].name, "data.0");
  EXPECT_EQ(out.entries[1].ino, 99u);
}

TEST(FieldsTest, TailCarriesBulkData) {
  std::vector<uint8_t> bytes = EncodeFields(PwriteRequest{.handle = 4, .offset = 8192});
  bytes.insert(bytes.end(), {1, 2, 3});
  PwriteRequest out;
  std::span<const uint8_t> tail;
  ASSERT_TRUE(DecodeFields(bytes, &out, /*allow_tail=*/true, &tail).ok());
  EXPECT_EQ(out.offset, 8192u);
  ASSERT_EQ(tail.size(), 3u);
  EXPECT_EQ(tail[2], 3);
  EXPECT_EQ(DecodeFields(bytes, &out).code(), EPROTO) << "trailing bytes where none belong";
}

TEST(FieldsTest, RejectsTruncatedMessages) {
  std::vector<uint8_t> bytes = EncodeFields(OpenRequest{.path = "/a/b/c", .flags = 1, .mode = 2});
  for (size_t n = 0; n < bytes.size(); ++n) {
    OpenRequest out;
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    EXPECT_EQ(DecodeFields(cut, &out).code(), EPROTO) << "cut at " << n;
  }
}

TEST(FieldsTest, RejectsInconsistentLengths) {
  // A string that claims more bytes than the payload has.
  std::vector<uint8_t> bytes = EncodeFields(PathRequest{.path = "abc"});
  bytes[0] = 200;
  PathRequest out;
  EXPECT_EQ(DecodeFields(bytes, &out).code(), EPROTO);
  // A string longer than any path may be.
  std::vector<uint8_t> huge =
      EncodeFields(PathRequest{.path = std::string(kMaxPathBytes + 1, 'x')});
  EXPECT_EQ(DecodeFields(huge, &out).code(), EPROTO);
  // A list that claims more entries than could fit.
  std::vector<uint8_t> list = {0xff, 0xff, 0xff, 0x7f};
  ReaddirReply dir;
  EXPECT_EQ(DecodeFields(list, &dir).code(), EPROTO);
}

TEST(OpsTest, EveryKnownOpHasAName) {
  for (uint16_t op = 0; op < 100; ++op) {
    if (IsKnownOp(op)) {
      EXPECT_STRNE(OpName(static_cast<Op>(op)), "unknown") << op;
    }
  }
  EXPECT_FALSE(IsKnownOp(0));
  EXPECT_FALSE(IsKnownOp(9999));
}

}  // namespace
}  // namespace iorelay::proto

namespace iorelay::proto {
namespace {

TEST(OpTableTest, EveryOpHasARowAndPayloadBounds) {
  int ops = 0;
#define IORELAY_COUNT_OP(Name, code, name, Request, Reply, family, handler, tail) \
  ++ops;                                                                          \
  EXPECT_TRUE(IsKnownOp(code));                                                   \
  EXPECT_STREQ(OpName(Op::k##Name), name);                                        \
  EXPECT_GE(Info(Op::k##Name).max_fields, EncodeFields(Request{}).size());
  IORELAY_PROTOCOL_OPS(IORELAY_COUNT_OP)
#undef IORELAY_COUNT_OP
  EXPECT_EQ(ops, 49);
  EXPECT_FALSE(IsKnownOp(9999));
  EXPECT_STREQ(OpName(static_cast<Op>(9999)), "unknown");
  EXPECT_EQ(Info(Op::kPad).max_payload, 4 + kMaxPathBytes);
  // Fixed-size requests are bounded by their size; paths by kMaxPathBytes; data by kMaxIoBytes.
  EXPECT_EQ(Info(Op::kClose).max_payload, 8u);
  EXPECT_EQ(Info(Op::kPing).max_payload, 0u);
  EXPECT_EQ(Info(Op::kFinished).max_payload, kProofBytes);
  EXPECT_EQ(Info(Op::kPwrite).max_payload, 16u + kMaxIoBytes);
  EXPECT_EQ(Info(Op::kPwritePiped).max_payload,
            20u + kMaxIoBytes);  // (its tail: what did not fit the pipe)
  // (its tail: the ranges' table, then their bytes)
  EXPECT_EQ(Info(Op::kPwriteRanges).max_payload, 16u + kMaxIoBytes);
  EXPECT_EQ(Info(Op::kPwriteRanges).family, Family::kWrite);
  EXPECT_EQ(Info(Op::kStat).max_payload, EncodeFields(StatRequest{}).size() + kMaxPathBytes);
  EXPECT_EQ(Info(Op::kRename).max_payload, 2 * (4 + kMaxPathBytes) + 4u);
  EXPECT_EQ(Info(Op::kPread).handler, Handler::kData);
  EXPECT_EQ(Info(Op::kMkdir).handler, Handler::kPath);
  EXPECT_EQ(Info(Op::kLock).family, Family::kLock);
  EXPECT_EQ(Info(Op::kAdmit).handler, Handler::kAdmin);  // the admin channel's only
  EXPECT_EQ(Info(Op::kRenew).handler, Handler::kFile);   // a job renews its own lease too
}

TEST(OpTableTest, RequestLongerThanItsOpAllowsIsAProtocolError) {
  uint8_t buf[kHeaderBytes];
  FrameHeader h{.op = static_cast<uint16_t>(Op::kClose), .id = 1, .length = 9};
  EncodeHeader(h, buf);
  Result<FrameHeader> d = DecodeHeader(buf);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), EPROTO);
  EXPECT_NE(d.status().message().find("close"), std::string::npos);
  h.length = 8;
  EncodeHeader(h, buf);
  EXPECT_TRUE(DecodeHeader(buf).ok());
  h.op |= kReplyBit;  // replies are bounded by the caller's limit only
  h.length = 100;
  EncodeHeader(h, buf);
  EXPECT_TRUE(DecodeHeader(buf).ok());
}

}  // namespace
}  // namespace iorelay::proto
