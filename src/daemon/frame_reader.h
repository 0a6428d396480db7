// Buffered reading of frames from a Connection: small frames cost one recv, large payloads
// are received straight into their destination (an aligned data buffer).
#pragma once

#include <cstdint>
#include <memory>

#include "common/status.h"
#include "daemon/transport.h"

namespace iorelay::daemon {

class FrameReader {
 public:
  explicit FrameReader(Connection* conn, size_t buffer_bytes = 64 * 1024)
      : conn_(conn), buf_(new uint8_t[buffer_bytes]), size_(buffer_bytes) {}

  // Exactly `n` bytes into `dst`. EPIPE when the stream ends first.
  Status ReadExact(void* dst, size_t n);
  // True at a clean end of stream (no byte of a new frame read).
  bool AtEof();

 private:
  Connection* conn_;
  std::unique_ptr<uint8_t[]> buf_;
  size_t size_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace iorelay::daemon
