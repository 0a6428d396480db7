// The kPad frame the client sends before a large write over shared memory: whatever the ring's
// position and the frame's fields, the write's data then starts on kShmDataAlign, and the pad is
// a frame the daemon decodes (and skips).
#include <gtest/gtest.h>

#include <vector>

#include "client/connection.h"
#include "common/shm_ring.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace iorelay::client {
namespace {

TEST(ShmPad, PutsTheDataOnTheAlignmentFromAnyPosition) {
  std::vector<uint8_t> pad;
  const size_t before = proto::kHeaderBytes + 16;  // a pwrite's header and fields
  for (uint64_t position : {0ull, 1ull, 24ull, 4055ull, 4056ull, 4057ull, 4095ull, 65536ull * 3 + 7,
                            (1ull << 40) + 123}) {
    Connection::PadBeforeData(position, before, &pad);
    EXPECT_EQ((position + pad.size() + before) % kShmDataAlign, 0u) << position;
    if (pad.empty()) continue;
    Result<proto::FrameHeader> h = proto::DecodeHeader(pad.data());
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    EXPECT_EQ(h->op, static_cast<uint16_t>(proto::Op::kPad));
    ASSERT_EQ(h->length, pad.size() - proto::kHeaderBytes);
    proto::PadRequest msg;
    EXPECT_TRUE(
        proto::DecodeFields(std::span<const uint8_t>(pad).subspan(proto::kHeaderBytes), &msg).ok())
        << position;
  }
  Connection::PadBeforeData(kShmDataAlign - before, before, &pad);
  EXPECT_TRUE(pad.empty());  // already aligned: no pad
}

}  // namespace
}  // namespace iorelay::client
