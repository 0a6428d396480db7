// The man-in-the-middle proxy: blocking sockets, two threads per connection (one a direction),
// each reading whole frames (and their tags once the daemon sealed the connection) before
// forwarding them, so that one byte of a chosen frame can be flipped.
#include "testutil/mitm_proxy_testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/frame_mac.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace iorelay::testing {
namespace {

bool ReadExact(int fd, uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool WriteAll(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::send(fd, p, n, MSG_NOSIGNAL);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

sockaddr_in Loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

}  // namespace

MitmProxy::MitmProxy(std::string target, Tamper tamper, bool to_daemon, size_t offset)
    : target_(std::move(target)),
      tamper_(tamper),
      tamper_to_daemon_(to_daemon),
      tamper_offset_(offset) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = Loopback(0);
  socklen_t len = sizeof a;
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listen_fd_, 64) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    std::perror("MitmProxy: listen");
    std::abort();
  }
  port_ = ntohs(a.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

MitmProxy::~MitmProxy() {
  stop_.store(true);
  acceptor_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
  for (std::thread& t : pumps_) t.join();
  for (int fd : fds_) ::close(fd);
  ::close(listen_fd_);
}

void MitmProxy::AcceptLoop() {
  const int target_port = std::atoi(target_.substr(target_.rfind(':') + 1).c_str());
  while (!stop_.load()) {
    struct pollfd p = {listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    int daemon = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = Loopback(target_port);
    if (daemon < 0 || ::connect(daemon, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(client);
      if (daemon >= 0) ::close(daemon);
      continue;
    }
    int one = 1;
    ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::setsockopt(daemon, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::lock_guard<std::mutex> lock(mu_);
    fds_.push_back(client);
    fds_.push_back(daemon);
    pumps_.emplace_back([this, client, daemon] { Pump(client, daemon, true); });
    pumps_.emplace_back([this, client, daemon] { Pump(daemon, client, false); });
  }
}

void MitmProxy::Pump(int from, int to, bool to_daemon) {
  std::vector<uint8_t> frame;
  size_t handshake_seen = 0;  // bytes of this direction's handshake frames before this one
  for (uint64_t n = 0;; ++n) {
    frame.resize(proto::kHeaderBytes);
    if (!ReadExact(from, frame.data(), frame.size())) break;
    Result<proto::FrameHeader> h = proto::DecodeHeader(frame.data());
    if (!h.ok()) break;
    // Frames 0 and 1 of each direction are the handshake (hello, auth); then tags, if sealed.
    const size_t tag = n >= 2 && sealed_.load() ? kFrameTagBytes : 0;
    frame.resize(proto::kHeaderBytes + h->length + tag);
    if (!ReadExact(from, frame.data() + proto::kHeaderBytes, h->length + tag)) break;
    if (h->op == static_cast<uint16_t>(proto::Op::kHeartbeat)) heartbeats_.fetch_add(1);
    if (to_daemon && n >= 2 && h->op != static_cast<uint16_t>(proto::Op::kFinished)) {
      requests_.fetch_add(1);
    }
    const std::span<const uint8_t> payload(frame.data() + proto::kHeaderBytes, h->length);
    if (!to_daemon && n == 1 && h->status == 0) {
      proto::AuthReply reply;
      // Known before the client can send its first sealed frame: it waits for this reply.
      if (proto::DecodeFields(payload, &reply).ok()) {
        sealed_.store(reply.sealed != 0);
        tag_algorithm_.store(reply.sealed);
      }
      // `sealed` is the 4 bytes before the daemon's proof, the reply's last field.
      uint8_t* sealed = frame.data() + frame.size() - kProofBytes - sizeof(uint32_t);
      if (tamper_ == Tamper::kSealedOff && reply.sealed != 0) {
        std::memset(sealed, 0, 4);
        tampered_.fetch_add(1);
      }
      if (tamper_ == Tamper::kTagDowngraded && reply.sealed == 2) {
        sealed[0] = 1;  // (little-endian)
        tampered_.fetch_add(1);
      }
    }
    if (to_daemon && n == 1 && tamper_ == Tamper::kTagOfferStripped && h->length >= 4) {
      // `seal_wanted` is the auth request's last field, 4 bytes little-endian.
      uint8_t& bits = frame[frame.size() - sizeof(uint32_t)];
      if ((bits & 2) != 0) {
        bits &= static_cast<uint8_t>(~2);
        tampered_.fetch_add(1);
      }
    }
    if (n < 2) {
      if (tamper_ == Tamper::kHandshakeByte && to_daemon == tamper_to_daemon_ &&
          tamper_offset_ >= handshake_seen && tamper_offset_ - handshake_seen < frame.size()) {
        frame[tamper_offset_ - handshake_seen] ^= 0x01;
        tampered_.fetch_add(1);
      }
      handshake_seen += frame.size();
      handshake_bytes_[to_daemon].store(handshake_seen);
    }
    const bool target =
        to_daemon
            ? tamper_ == Tamper::kWriteData && h->op == static_cast<uint16_t>(proto::Op::kPwrite) &&
                  h->length > proto::Info(proto::Op::kPwrite).max_fields
            : tamper_ == Tamper::kReadData &&
                  h->op == (static_cast<uint16_t>(proto::Op::kPread) | proto::kReplyBit) &&
                  h->status == 0 && h->length > 0;
    if (target && tampered_.load() == 0) {
      frame[proto::kHeaderBytes + h->length - 1] ^= 0x01;  // the last data byte
      tampered_.fetch_add(1);
    }
    if (!WriteAll(to, frame.data(), frame.size())) break;
  }
  // One side left or failed: the other side sees the connection end, as with a real break.
  ::shutdown(from, SHUT_RDWR);
  ::shutdown(to, SHUT_RDWR);
}

}  // namespace iorelay::testing
