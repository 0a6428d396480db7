// libFuzzer target over the bytes a daemon decodes before anything else: the frame header and
// every message. Besides "no crash, no sanitizer report", each accepted input must round-trip:
// what decodes re-encodes to bytes that decode to the same encoding.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <tuple>
#include <vector>

#include "proto/messages.h"
#include "proto/wire.h"

namespace iorelay::proto {
namespace {

// Every message type of src/proto/messages.h that crosses the wire.
using Messages =
    std::tuple<Empty, HelloReply, AuthRequest, AuthReply, AdoptRequest, ExpectAdoptRequest,
               OpenRequest, OpenReply, HandleRequest, PreadRequest, PwriteRequest, ReadRequest,
               WriteRequest, CountReply, LseekRequest, OffsetReply, FsyncRequest, FtruncateRequest,
               FallocateRequest, SetflRequest, WireStat, WireStatfs, PathRequest, StatRequest,
               AccessRequest, MkdirRequest, RenameRequest, TruncateRequest, ReaddirRequest,
               ReaddirReply, LockRequest, LockReply, UnlockAllRequest, ChmodRequest, FchmodRequest,
               FutimensRequest, UtimensRequest, SymlinkRequest, LinkRequest>;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "frame_fuzz: %s\n", what);
    std::abort();
  }
}

template <typename Msg>
void RoundTrip(std::span<const uint8_t> payload) {
  Msg m;
  if (!DecodeFields(payload, &m).ok()) return;
  const std::vector<uint8_t> once = EncodeFields(m);
  Check(std::equal(once.begin(), once.end(), payload.begin(), payload.end()),
        "a decoded message does not re-encode to its bytes");
  Msg again;
  Check(DecodeFields(once, &again).ok(), "a re-encoded message does not decode");
}

template <size_t... I>
void RoundTripOne(size_t index, std::span<const uint8_t> payload, std::index_sequence<I...>) {
  ((I == index ? RoundTrip<std::tuple_element_t<I, Messages>>(payload) : void()), ...);
}

}  // namespace
}  // namespace iorelay::proto

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace iorelay::proto;
  if (size >= kHeaderBytes) {
    iorelay::Result<FrameHeader> h = DecodeHeader(data);
    if (h.ok()) {
      uint8_t again[kHeaderBytes];
      EncodeHeader(*h, again);
      Check(std::memcmp(again, data, kHeaderBytes) == 0, "a header does not re-encode");
    }
  }
  // The first byte picks the message type, the rest is its payload.
  if (size >= 1) {
    constexpr size_t kTypes = std::tuple_size_v<Messages>;
    RoundTripOne(data[0] % kTypes, std::span<const uint8_t>(data + 1, size - 1),
                 std::make_index_sequence<kTypes>{});
  }
  return 0;
}
