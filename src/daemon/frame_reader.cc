// FrameReader: refills its buffer only when empty; bypasses it for large reads.
#include "daemon/frame_reader.h"

#include <cstring>

namespace iorelay::daemon {

bool FrameReader::AtEof() {
  if (begin_ < end_) return false;
  Result<size_t> n = conn_->Recv(buf_.get(), size_);
  if (!n.ok() || *n == 0) return true;
  begin_ = 0;
  end_ = *n;
  return false;
}

Status FrameReader::ReadExact(void* dst, size_t n) {
  uint8_t* out = static_cast<uint8_t*>(dst);
  while (n > 0) {
    if (begin_ < end_) {
      size_t take = std::min(n, end_ - begin_);
      std::memcpy(out, buf_.get() + begin_, take);
      begin_ += take;
      out += take;
      n -= take;
      continue;
    }
    Result<size_t> got = n >= size_ ? conn_->Recv(out, n) : conn_->Recv(buf_.get(), size_);
    if (!got.ok()) return got.status();
    if (*got == 0) return Status::FromErrno(EPIPE, "connection closed inside a frame");
    if (n >= size_) {
      out += *got;
      n -= *got;
    } else {
      begin_ = 0;
      end_ = *got;
    }
  }
  return Status::Ok();
}

}  // namespace iorelay::daemon
