// The op table's generated rows: names, families, handlers and payload bounds.
#include "proto/messages.h"

#include <algorithm>
#include <array>

#include "proto/wire.h"

namespace iorelay::proto {

#define IORELAY_OP_ROW_CHECK(Name, code, name, Request, Reply, family, handler, tail) \
  static_assert((code) > 0 && (code) < 64, "op codes index a table of 64");           \
  static_assert(                                                                      \
      requires(Request q, Reply r, Writer & w) {                                      \
        w(q);                                                                         \
        w(r);                                                                         \
      },                                                                              \
      "a row's request and reply are messages");
IORELAY_PROTOCOL_OPS(IORELAY_OP_ROW_CHECK)
#undef IORELAY_OP_ROW_CHECK

namespace {

// The largest encoding of a message: integers at their size, strings at kMaxPathBytes, lists at
// kMaxListEntries of their largest element (a bound, never an allocation).
class MaxSize {
 public:
  template <typename T>
  requires std::is_integral_v<T>
  void operator()(const T&) { bytes += sizeof(T); }
  void operator()(const std::string&) { bytes += 4 + kMaxPathBytes; }
  template <size_t N>
  void operator()(const std::array<uint8_t, N>&) {
    bytes += N;
  }
  template <typename T>
  void operator()(const std::vector<T>&) {
    MaxSize element;
    T t{};
    element(t);
    bytes += 4 + uint64_t{kMaxListEntries} * element.bytes;
  }
  template <typename T>
  requires requires(T t, MaxSize& m) { t.Visit(m); }
  void operator()(T& msg) { msg.Visit(*this); }
  uint64_t bytes = 0;
};

template <typename Msg>
uint32_t MaxFields() {
  MaxSize m;
  Msg msg{};
  m(msg);
  return static_cast<uint32_t>(std::min<uint64_t>(m.bytes, kMaxPayloadBytes));
}

struct Row {
  Op op;
  OpInfo info;
};

// Never destroyed: a thread still decoding while the process exits must find it intact.
const std::vector<Row>& Rows() {
  static const auto* rows = new std::vector<Row>{
#define IORELAY_OP_ROW(Name, code, name, Request, Reply, family, handler, tail) \
  {Op::k##Name,                                                                 \
   {name, Family::family, Handler::handler, tail, MaxFields<Request>(),         \
    static_cast<uint32_t>(std::min<uint64_t>(                                   \
        uint64_t{MaxFields<Request>()} + ((tail) ? kMaxIoBytes : 0), kMaxPayloadBytes))}},
      IORELAY_PROTOCOL_OPS(IORELAY_OP_ROW)
#undef IORELAY_OP_ROW
  };
  return *rows;
}

}  // namespace

const OpInfo& Info(Op op) {
  // Op codes are small (< 64): a direct index built once.
  static const std::array<const OpInfo*, 64> by_code = [] {
    std::array<const OpInfo*, 64> a{};
    for (const Row& r : Rows()) a[static_cast<uint16_t>(r.op)] = &r.info;
    return a;
  }();
  static const OpInfo unknown{"unknown", Family::kMetadata, Handler::kFile, false, 0, 0};
  const uint16_t code = static_cast<uint16_t>(op);
  return code < by_code.size() && by_code[code] != nullptr ? *by_code[code] : unknown;
}

const char* OpName(Op op) { return Info(op).name; }

}  // namespace iorelay::proto
