// FrameReader fed in pieces of every size: frames come out whole and in order, a write's data
// lands in its buffer, the end of stream is told apart from a cut frame; on a sealed connection
// each frame's tag is checked and one altered byte anywhere in a frame fails it.
#include "daemon/frame_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "proto/messages.h"

namespace iorelay::daemon {
namespace {

using proto::Op;

// Hands out `bytes` `chunk` at a time, then EAGAIN (or end of stream with `eof`).
class ScriptedConnection final : public Connection {
 public:
  ScriptedConnection(std::vector<uint8_t> bytes, size_t chunk)
      : bytes_(std::move(bytes)), chunk_(chunk) {}
  Result<size_t> Recv(void* buf, size_t n) override {
    if (pos_ == bytes_.size()) {
      if (eof) return size_t{0};
      return Status::FromErrno(EAGAIN, "recv");
    }
    size_t take = std::min({n, chunk_, bytes_.size() - pos_});
    std::memcpy(buf, bytes_.data() + pos_, take);
    pos_ += take;
    return take;
  }
  Result<size_t> SendSome(const struct iovec*, int) override { return size_t{0}; }
  void Shutdown() override {}
  int PollFd() const override { return -1; }
  std::string peer() const override { return "scripted"; }
  bool eof = false;

 private:
  std::vector<uint8_t> bytes_;
  size_t chunk_;
  size_t pos_ = 0;
};

std::vector<uint8_t> Frame(Op op, uint64_t id, const std::vector<uint8_t>& payload) {
  proto::FrameHeader h;
  h.op = static_cast<uint16_t>(op);
  h.id = id;
  h.length = static_cast<uint32_t>(payload.size());
  std::vector<uint8_t> out(proto::kHeaderBytes);
  proto::EncodeHeader(h, out.data());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

class FrameReaderTest : public ::testing::TestWithParam<size_t> {
 protected:
  BufferPool pool_;
  std::vector<uint8_t> scratch_ = std::vector<uint8_t>(64 * 1024);
};

TEST_P(FrameReaderTest, FramesComeOutWholeWhateverThePieces) {
  std::vector<uint8_t> data(200 * 1024);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
  std::vector<uint8_t> write = proto::EncodeFields(proto::PwriteRequest{5, 4096});
  write.insert(write.end(), data.begin(), data.end());
  std::vector<uint8_t> stream = Frame(Op::kPing, 1, {});
  std::vector<uint8_t> w = Frame(Op::kPwrite, 2, write);
  stream.insert(stream.end(), w.begin(), w.end());
  std::vector<uint8_t> p = Frame(Op::kPread, 3, proto::EncodeFields(proto::PreadRequest{5, 0, 9}));
  stream.insert(stream.end(), p.begin(), p.end());
  ScriptedConnection conn(stream, GetParam());
  conn.eof = true;
  FrameReader in(&pool_);
  std::vector<uint64_t> ids;
  for (;;) {
    in.NewTurn();
    FrameReader::Step s = in.Next(&conn, /*authed=*/true, scratch_);
    if (s == FrameReader::Step::kAgain) continue;
    if (s == FrameReader::Step::kEof) break;
    ASSERT_EQ(s, FrameReader::Step::kFrame) << in.error();
    ids.push_back(in.header().id);
    if (in.header().op == static_cast<uint16_t>(Op::kPwrite)) {
      EXPECT_EQ(in.fields().size(), 16u);
      ASSERT_EQ(in.data_len(), data.size());
      Buffer b = in.TakeData();
      EXPECT_GE(b.capacity(), data.size());
      EXPECT_EQ(std::memcmp(b.data(), data.data(), data.size()), 0);
      pool_.Put(std::move(b));
    } else if (in.header().op == static_cast<uint16_t>(Op::kPread)) {
      proto::PreadRequest r;
      ASSERT_TRUE(proto::DecodeFields(in.fields(), &r).ok());
      EXPECT_EQ(r.length, 9u);
    }
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 3}));
}

INSTANTIATE_TEST_SUITE_P(Pieces, FrameReaderTest, ::testing::Values(1, 7, 4096, 100'000, 1 << 30));

TEST(FrameReader, AnnouncedPayloadIsNotAllocatedBeforeItArrives) {
  BufferPool pool;
  std::vector<uint8_t> scratch(64 * 1024);
  proto::FrameHeader h;
  h.op = static_cast<uint16_t>(Op::kPwrite);
  h.length = static_cast<uint32_t>(proto::Info(Op::kPwrite).max_fields) + proto::kMaxIoBytes;
  std::vector<uint8_t> bytes(proto::kHeaderBytes);
  proto::EncodeHeader(h, bytes.data());
  std::vector<uint8_t> fields = proto::EncodeFields(proto::PwriteRequest{1, 0});
  bytes.insert(bytes.end(), fields.begin(), fields.end());
  bytes.resize(bytes.size() + 10, 'x');
  ScriptedConnection conn(bytes, 1 << 20);
  FrameReader in(&pool);
  EXPECT_EQ(in.Next(&conn, true, scratch), FrameReader::Step::kAgain);
  EXPECT_EQ(in.partial_bytes(), bytes.size());
  conn.eof = true;
  in.NewTurn();
  EXPECT_EQ(in.Next(&conn, true, scratch), FrameReader::Step::kError);
  EXPECT_EQ(in.error(), "connection closed inside a frame");
}

// With HoldTails, a write stops at its header, reading nothing more, until admitted; frames
// without data pass. The gauge counts the data's buffer while the frame arrives, not after.
TEST(FrameReader, HeldTailsAreReadOnlyOnceAdmitted) {
  BufferPool pool;
  ByteGauge gauge;
  std::vector<uint8_t> scratch(64 * 1024);
  std::vector<uint8_t> write = proto::EncodeFields(proto::PwriteRequest{1, 0});
  write.resize(write.size() + 300'000, 'd');
  std::vector<uint8_t> stream = Frame(Op::kPing, 1, {});
  std::vector<uint8_t> w = Frame(Op::kPwrite, 2, write);
  stream.insert(stream.end(), w.begin(), w.end());
  std::vector<uint8_t> empty = Frame(Op::kPwrite, 3, proto::EncodeFields(proto::PwriteRequest{}));
  stream.insert(stream.end(), empty.begin(), empty.end());
  ScriptedConnection conn(stream, 4096);
  FrameReader in(&pool);
  in.HoldTails();
  in.CountBuffersIn(&gauge);
  ASSERT_EQ(in.Next(&conn, true, scratch), FrameReader::Step::kFrame);  // the ping
  EXPECT_EQ(in.header().id, 1u);
  ASSERT_EQ(in.Next(&conn, true, scratch), FrameReader::Step::kTail);
  EXPECT_EQ(in.header().id, 2u);
  EXPECT_EQ(in.data_len(), 300'000u);
  EXPECT_FALSE(in.receiving_tail());
  const uint64_t received = in.received_bytes();
  for (int i = 0; i < 3; ++i) {
    in.NewTurn();
    EXPECT_EQ(in.Next(&conn, true, scratch), FrameReader::Step::kTail);
  }
  EXPECT_EQ(in.received_bytes(), received);  // nothing more taken from the connection
  EXPECT_EQ(gauge.now(), 0u);
  in.AdmitTail();
  EXPECT_TRUE(in.receiving_tail());
  FrameReader::Step s;
  while ((s = in.Next(&conn, true, scratch)) == FrameReader::Step::kAgain) {
    EXPECT_GT(gauge.now(), 0u);
    in.NewTurn();
  }
  ASSERT_EQ(s, FrameReader::Step::kFrame) << in.error();
  EXPECT_FALSE(in.receiving_tail());
  EXPECT_GE(gauge.now(), 300'000u);
  Buffer data = in.TakeData();
  EXPECT_EQ(gauge.now(), 0u);
  EXPECT_GE(gauge.peak(), 300'000u);
  EXPECT_EQ(std::memcmp(data.data() + 299'999, "d", 1), 0);
  pool.Put(std::move(data));
  in.NewTurn();
  ASSERT_EQ(in.Next(&conn, true, scratch), FrameReader::Step::kFrame);  // no data: not held
  EXPECT_EQ(in.header().id, 3u);
}

TEST(FrameReader, BigFramesBeforeAuthenticationAreRefused) {
  BufferPool pool;
  std::vector<uint8_t> scratch(4096);
  ScriptedConnection conn(Frame(Op::kHello, 1, std::vector<uint8_t>(kPreAuthMaxPayload + 1)), 4096);
  FrameReader in(&pool);
  EXPECT_EQ(in.Next(&conn, /*authed=*/false, scratch), FrameReader::Step::kError);
}

// A sealed stream: ping, a 200 KiB pwrite, pread, each followed by its tag.
std::vector<uint8_t> SealedStream(const SessionKey& key, std::vector<size_t>* frame_ends) {
  std::vector<uint8_t> data(200 * 1024);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13);
  std::vector<uint8_t> write = proto::EncodeFields(proto::PwriteRequest{5, 4096});
  write.insert(write.end(), data.begin(), data.end());
  FrameSealer sealer(key, FrameDirection::kToDaemon);
  std::vector<uint8_t> stream;
  for (const std::vector<uint8_t>& f :
       {Frame(Op::kPing, 1, {}), Frame(Op::kPwrite, 2, write),
        Frame(Op::kPread, 3, proto::EncodeFields(proto::PreadRequest{5, 0, 9}))}) {
    FrameMac mac = sealer.Next();
    mac.Update(f);
    FrameTag tag = mac.Final();
    stream.insert(stream.end(), f.begin(), f.end());
    stream.insert(stream.end(), tag.begin(), tag.end());
    frame_ends->push_back(stream.size());
  }
  return stream;
}

// Reads `stream` sealed under `key` in pieces of `chunk`; the ids of the frames that came out,
// and the last step.
FrameReader::Step ReadSealed(const std::vector<uint8_t>& stream, const SessionKey& key,
                             size_t chunk, std::vector<uint64_t>* ids, FrameReader* in) {
  ScriptedConnection conn(stream, chunk);
  conn.eof = true;
  std::vector<uint8_t> scratch(64 * 1024);
  in->Seal(key);
  for (;;) {
    in->NewTurn();
    FrameReader::Step s = in->Next(&conn, /*authed=*/true, scratch);
    if (s == FrameReader::Step::kAgain) continue;
    if (s != FrameReader::Step::kFrame) return s;
    ids->push_back(in->header().id);
    if (in->data_len() > 0) in->TakeData();  // (freed here)
  }
}

TEST_P(FrameReaderTest, SealedFramesComeOutWithTheirTagsChecked) {
  SessionKey key{};
  key[0] = 7;
  std::vector<size_t> ends;
  std::vector<uint8_t> stream = SealedStream(key, &ends);
  FrameReader in(&pool_);
  std::vector<uint64_t> ids;
  EXPECT_EQ(ReadSealed(stream, key, GetParam(), &ids, &in), FrameReader::Step::kEof) << in.error();
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_FALSE(in.integrity_failed());
}

TEST(FrameReader, OneAlteredByteFailsItsFrameAndNoLaterOne) {
  SessionKey key{};
  key[5] = 9;
  std::vector<size_t> ends;
  const std::vector<uint8_t> stream = SealedStream(key, &ends);
  // In the pwrite frame: its header's id, its fields, its data, its tag. (Length, op
  // and the version are checked by the header's own rules first.)
  const size_t pwrite = ends[0];
  for (size_t at : {pwrite + 8, pwrite + proto::kHeaderBytes + 2,
                    pwrite + proto::kHeaderBytes + 16 + 100'000, ends[1] - 1}) {
    std::vector<uint8_t> altered = stream;
    altered[at] ^= 0x01;
    BufferPool pool;
    FrameReader in(&pool);
    std::vector<uint64_t> ids;
    EXPECT_EQ(ReadSealed(altered, key, 4096, &ids, &in), FrameReader::Step::kError) << at;
    EXPECT_TRUE(in.integrity_failed()) << at << ": " << in.error();
    EXPECT_EQ(ids, (std::vector<uint64_t>{1})) << at;  // the frames before it only
  }
  // The right bytes under another key fail at the first frame.
  SessionKey other = key;
  other[5] = 10;
  BufferPool pool;
  FrameReader in(&pool);
  std::vector<uint64_t> ids;
  EXPECT_EQ(ReadSealed(stream, other, 4096, &ids, &in), FrameReader::Step::kError);
  EXPECT_TRUE(ids.empty());
}

}  // namespace
}  // namespace iorelay::daemon
