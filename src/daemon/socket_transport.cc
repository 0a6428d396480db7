// TCP and Unix-domain stream sockets behind the Transport interface.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "daemon/transport.h"

namespace iorelay::daemon {
namespace {

class SocketConnection final : public Connection {
 public:
  SocketConnection(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}
  ~SocketConnection() override { ::close(fd_); }

  Result<size_t> Recv(void* buf, size_t n) override {
    for (;;) {
      ssize_t r = ::recv(fd_, buf, n, 0);
      if (r >= 0) return static_cast<size_t>(r);
      if (errno != EINTR) return Status::LastError("recv");
    }
  }

  Status Sendv(const struct iovec* iov, int iovcnt) override {
    struct iovec local[8];
    if (iovcnt > 8) return Status::InvalidArgument("too many iovecs");
    std::memcpy(local, iov, sizeof(iovec) * static_cast<size_t>(iovcnt));
    struct iovec* cur = local;
    while (iovcnt > 0) {
      struct msghdr msg = {};
      msg.msg_iov = cur;
      msg.msg_iovlen = static_cast<size_t>(iovcnt);
      ssize_t r = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
      if (r < 0) {
        if (errno == EINTR) continue;
        return Status::LastError("send");
      }
      size_t done = static_cast<size_t>(r);
      while (iovcnt > 0 && done >= cur->iov_len) {
        done -= cur->iov_len;
        ++cur;
        --iovcnt;
      }
      if (iovcnt > 0) {
        cur->iov_base = static_cast<char*>(cur->iov_base) + done;
        cur->iov_len -= done;
      }
    }
    return Status::Ok();
  }

  void Shutdown() override { ::shutdown(fd_, SHUT_RDWR); }
  void StopReceiving() override { ::shutdown(fd_, SHUT_RD); }
  std::string peer() const override { return peer_; }

 private:
  int fd_;
  std::string peer_;
};

class SocketListener final : public Listener {
 public:
  SocketListener(int fd, std::string address, bool tcp, std::string unlink_path)
      : fd_(fd), address_(std::move(address)), tcp_(tcp), unlink_path_(std::move(unlink_path)) {}
  ~SocketListener() override {
    ::close(fd_);
    if (!unlink_path_.empty()) ::unlink(unlink_path_.c_str());
  }

  Result<std::unique_ptr<Connection>> Accept() override {
    for (;;) {
      int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return Status::LastError("accept");
      }
      if (tcp_) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      }
      return std::unique_ptr<Connection>(std::make_unique<SocketConnection>(fd, address_));
    }
  }

  std::string address() const override { return address_; }
  void Shutdown() override { ::shutdown(fd_, SHUT_RDWR); }

 private:
  int fd_;
  std::string address_;
  bool tcp_;
  std::string unlink_path_;
};

Result<std::unique_ptr<Listener>> ListenUnix(const std::string& path) {
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    return Status::InvalidArgument("unix socket path empty or too long: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::LastError("socket");
  ::unlink(path.c_str());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 512) != 0) {
    Status s = Status::LastError("listen unix:" + path);
    ::close(fd);
    return s;
  }
  return std::unique_ptr<Listener>(
      std::make_unique<SocketListener>(fd, "unix:" + path, /*tcp=*/false, path));
}

Result<std::unique_ptr<Listener>> ListenTcp(const std::string& host_port) {
  size_t colon = host_port.rfind(':');
  if (colon == std::string::npos) return Status::InvalidArgument("tcp: wants HOST:PORT");
  std::string host = host_port.substr(0, colon);
  std::string port = host_port.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  struct addrinfo hints = {};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  struct addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) {
    return Status::InvalidArgument("tcp:" + host_port + ": " + ::gai_strerror(rc));
  }
  int fd = ::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
  if (fd < 0) {
    ::freeaddrinfo(res);
    return Status::LastError("socket");
  }
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, 512) != 0) {
    Status s = Status::LastError("listen tcp:" + host_port);
    ::freeaddrinfo(res);
    ::close(fd);
    return s;
  }
  ::freeaddrinfo(res);
  struct sockaddr_storage ss = {};
  socklen_t len = sizeof ss;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  char text[INET6_ADDRSTRLEN] = {};
  int bound_port = 0;
  std::string address;
  if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    bound_port = ntohs(a->sin6_port);
    address = "tcp:[" + std::string(text) + "]:" + std::to_string(bound_port);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    bound_port = ntohs(a->sin_port);
    address = "tcp:" + std::string(text) + ":" + std::to_string(bound_port);
  }
  return std::unique_ptr<Listener>(std::make_unique<SocketListener>(fd, address, true, ""));
}

}  // namespace

Result<std::unique_ptr<Listener>> Listen(const std::string& spec) {
  if (spec.rfind("unix:", 0) == 0) return ListenUnix(spec.substr(5));
  if (spec.rfind("tcp:", 0) == 0) return ListenTcp(spec.substr(4));
  return Status::InvalidArgument("unknown transport in '" + spec + "'");
}

}  // namespace iorelay::daemon
