// RawClient: blocking socket I/O with poll timeouts.
#include "testutil/raw_client_testutil.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "common/handshake_transcript.h"

namespace iorelay::daemon::testing {

RawClient::~RawClient() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawClient::Connect(const std::string& unix_path) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, unix_path.c_str(), sizeof addr.sun_path - 1);
  return ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

bool RawClient::SendBytes(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t r = ::send(fd_, p, n, MSG_NOSIGNAL);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool RawClient::SendFrame(proto::Op op, uint64_t id, const std::vector<uint8_t>& fields,
                          const std::vector<uint8_t>& tail) {
  proto::FrameHeader h;
  h.op = static_cast<uint16_t>(op);
  h.id = id;
  h.length = static_cast<uint32_t>(fields.size() + tail.size());
  uint8_t header[proto::kHeaderBytes];
  proto::EncodeHeader(h, header);
  std::vector<uint8_t> all(header, header + sizeof header);
  all.insert(all.end(), fields.begin(), fields.end());
  all.insert(all.end(), tail.begin(), tail.end());
  return SendBytes(all.data(), all.size());
}

bool RawClient::ReadExact(void* dst, size_t n, int timeout_ms) {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    struct pollfd pfd = {fd_, POLLIN, 0};
    if (::poll(&pfd, 1, timeout_ms) <= 0) return false;
    ssize_t r = ::recv(fd_, p, n, 0);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool RawClient::ReadFrame(Frame* f, int timeout_ms, bool keep_heartbeats) {
  for (;;) {
    uint8_t header[proto::kHeaderBytes];
    if (!ReadExact(header, sizeof header, timeout_ms)) return false;
    Result<proto::FrameHeader> h = proto::DecodeHeader(header);
    if (!h.ok()) return false;
    f->header = *h;
    f->payload.resize(h->length);
    if (h->length > 0 && !ReadExact(f->payload.data(), h->length, timeout_ms)) return false;
    if (h->op == static_cast<uint16_t>(proto::Op::kHeartbeat) && !keep_heartbeats) {
      ++heartbeats_;
      continue;
    }
    return true;
  }
}

bool RawClient::WaitClosed(int timeout_ms) {
  char buf[4096];
  for (;;) {
    struct pollfd pfd = {fd_, POLLIN, 0};
    if (::poll(&pfd, 1, timeout_ms) <= 0) return false;
    ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
    if (r <= 0) return true;  // EOF or reset
  }
}

int RawClient::Handshake(const Secret& secret, proto::AuthReply* reply, uint64_t join,
                         uint64_t token) {
  Frame f;
  const auto hello_op = static_cast<uint16_t>(proto::Op::kHello);
  const proto::FrameHeader hello_header{hello_op, next_id_, 0, 0};
  if (!Call(proto::Op::kHello, {}, &f) || f.header.status != 0) return -1;
  proto::HelloReply hello;
  if (!proto::DecodeFields(f.payload, &hello).ok()) return -1;
  ClientTranscript transcript(proto::kVersion);
  transcript.AddHello(proto::HeaderBytes(hello_header), {}, proto::HeaderBytes(f.header),
                      f.payload);
  proto::AuthRequest auth;
  auth.client_nonce = RandomNonce();
  auth.proof = ComputeProof(secret, hello.server_nonce, auth.client_nonce);
  auth.key_id = KeyIdOf(secret);
  auth.pid = static_cast<uint32_t>(::getpid());
  auth.host = "test";
  auth.join_session = join;
  auth.join_token = token;
  const std::vector<uint8_t> auth_fields = proto::EncodeFields(auth);
  const auto auth_op = static_cast<uint16_t>(proto::Op::kAuth);
  const proto::FrameHeader auth_header{auth_op, next_id_, static_cast<uint32_t>(auth_fields.size()),
                                       0};
  if (!Call(proto::Op::kAuth, auth_fields, &f)) return -1;
  if (f.header.status != 0) return f.header.status;
  proto::AuthReply r;
  if (!proto::DecodeFields(f.payload, &r).ok()) return -1;
  if (!transcript.AddAuth(secret, proto::HeaderBytes(auth_header), auth_fields,
                          proto::HeaderBytes(f.header), f.payload)) {
    return -1;
  }
  proto::FinishedRequest finished;
  finished.mac = transcript.Finished(secret);
  if (!SendFrame(proto::Op::kFinished, next_id_++, proto::EncodeFields(finished), {})) return -1;
  if (reply != nullptr) *reply = r;
  return 0;
}

bool RawClient::Call(proto::Op op, const std::vector<uint8_t>& fields, Frame* reply,
                     const std::vector<uint8_t>& tail) {
  uint64_t id = next_id_++;
  if (!SendFrame(op, id, fields, tail)) return false;
  if (!ReadFrame(reply)) return false;
  return reply->header.id == id &&
         reply->header.op == (static_cast<uint16_t>(op) | proto::kReplyBit);
}

}  // namespace iorelay::daemon::testing
