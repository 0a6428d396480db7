// Reply framing: header and fields and bulk tail in one sendmsg.
#include "daemon/client_conn.h"

namespace iorelay::daemon {

void ClientConn::Send(proto::Op op, uint64_t id, int32_t status, std::span<const uint8_t> fields,
                      std::span<const uint8_t> tail) {
  proto::FrameHeader h;
  h.op = static_cast<uint16_t>(static_cast<uint16_t>(op) | proto::kReplyBit);
  h.id = id;
  h.length = static_cast<uint32_t>(fields.size() + tail.size());
  h.status = status;
  uint8_t header[proto::kHeaderBytes];
  proto::EncodeHeader(h, header);
  struct iovec iov[3];
  int n = 0;
  iov[n++] = {header, sizeof header};
  if (!fields.empty()) iov[n++] = {const_cast<uint8_t*>(fields.data()), fields.size()};
  if (!tail.empty()) iov[n++] = {const_cast<uint8_t*>(tail.data()), tail.size()};
  std::lock_guard<std::mutex> lock(send_mu_);
  if (closed_.load()) return;
  if (!transport_->Sendv(iov, n).ok()) {
    closed_.store(true);
    transport_->Shutdown();
  }
}

std::vector<uint8_t>& ClientConn::ScratchFields() {
  thread_local std::vector<uint8_t> fields;
  fields.clear();
  return fields;
}

void ClientConn::SendHeartbeat() {
  proto::FrameHeader h;
  h.op = static_cast<uint16_t>(proto::Op::kHeartbeat);
  uint8_t header[proto::kHeaderBytes];
  proto::EncodeHeader(h, header);
  struct iovec iov = {header, sizeof header};
  std::lock_guard<std::mutex> lock(send_mu_);
  if (closed_.load()) return;
  if (!transport_->Sendv(&iov, 1).ok()) {
    closed_.store(true);
    transport_->Shutdown();
  }
}

}  // namespace iorelay::daemon
