// TCP and Unix-domain stream sockets behind the Transport interface.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "common/unix_address.h"
#include "daemon/transport.h"
#include "daemon/unix_path_claim.h"

namespace iorelay::daemon {
namespace {

class SocketConnection final : public Connection {
 public:
  SocketConnection(int fd, std::string peer, bool tcp)
      : fd_(fd), peer_(std::move(peer)), tcp_(tcp) {}
  ~SocketConnection() override { ::close(fd_); }

  Result<size_t> Recv(void* buf, size_t n) override {
    for (;;) {
      ssize_t r = ::recv(fd_, buf, n, MSG_DONTWAIT);
      if (r >= 0) return static_cast<size_t>(r);
      if (errno != EINTR) return Status::LastError("recv");
    }
  }

  Result<size_t> SendSome(const struct iovec* iov, int iovcnt) override {
    struct msghdr msg = {};
    msg.msg_iov = const_cast<struct iovec*>(iov);
    msg.msg_iovlen = static_cast<size_t>(iovcnt);
    for (;;) {
      ssize_t r = ::sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (r >= 0) return static_cast<size_t>(r);
      if (errno == EAGAIN || errno == EWOULDBLOCK) return size_t{0};
      if (errno != EINTR) return Status::LastError("send");
    }
  }

  void Shutdown() override { ::shutdown(fd_, SHUT_RDWR); }
  int PollFd() const override { return fd_; }
  std::string peer() const override { return peer_; }
  bool OverNetwork() const override { return tcp_; }

 private:
  int fd_;
  std::string peer_;
  bool tcp_;
};

// "tcp:HOST:PORT" ("tcp:[HOST]:PORT" for IPv6) of a socket address.
std::string TcpName(const struct sockaddr_storage& ss) {
  char text[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    return "tcp:[" + std::string(text) + "]:" + std::to_string(ntohs(a->sin6_port));
  }
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    return "tcp:" + std::string(text) + ":" + std::to_string(ntohs(a->sin_port));
  }
  return "tcp:?";
}

// A Unix client's socket has no name: it is told by the listener's address and the process
// that connected (SO_PEERCRED, as of connect).
std::string UnixPeerName(int fd, const std::string& listener) {
  struct ucred cred = {};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) {
    return listener + " (unknown process)";
  }
  return listener + " (pid " + std::to_string(cred.pid) + ", uid " + std::to_string(cred.uid) + ")";
}

class SocketListener final : public Listener {
 public:
  // `unix_path` is the socket file this listener created (empty for TCP); it is removed at the
  // end only while it is still that file (same device and inode), so stopping a daemon never
  // removes the socket of another daemon that has since taken the path. `claim` (the path's
  // lock) is released after that.
  SocketListener(int fd, std::string address, bool tcp, std::string unix_path,
                 std::unique_ptr<UnixPathClaim> claim = nullptr)
      : fd_(fd),
        address_(std::move(address)),
        tcp_(tcp),
        unix_path_(std::move(unix_path)),
        claim_(std::move(claim)) {
    struct stat st;
    if (!unix_path_.empty() && ::lstat(unix_path_.c_str(), &st) == 0) {
      dev_ = st.st_dev;
      ino_ = st.st_ino;
    }
  }
  ~SocketListener() override {
    ::close(fd_);
    struct stat st;
    if (!unix_path_.empty() && ino_ != 0 && ::lstat(unix_path_.c_str(), &st) == 0 &&
        st.st_dev == dev_ && st.st_ino == ino_) {
      ::unlink(unix_path_.c_str());
    }
  }

  Result<std::unique_ptr<Connection>> Accept() override {
    for (;;) {
      struct sockaddr_storage ss = {};
      socklen_t len = sizeof ss;
      int fd = ::accept4(fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EWOULDBLOCK) errno = EAGAIN;
        return Status::LastError("accept");
      }
      if (tcp_) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      }
      std::string peer = tcp_ ? TcpName(ss) : UnixPeerName(fd, address_);
      return std::unique_ptr<Connection>(
          std::make_unique<SocketConnection>(fd, std::move(peer), tcp_));
    }
  }

  std::string address() const override { return address_; }
  int PollFd() const override { return fd_; }
  void Shutdown() override { ::shutdown(fd_, SHUT_RDWR); }

 private:
  int fd_;
  std::string address_;
  bool tcp_;
  std::string unix_path_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  std::unique_ptr<UnixPathClaim> claim_;  // destroyed after the socket file is removed
};

Result<std::unique_ptr<Listener>> ListenUnix(const std::string& path) {
  struct sockaddr_un addr;
  const socklen_t len = FillUnixAddress(path, &addr);
  if (len == 0) {
    return Status::InvalidArgument("unix socket path not absolute (nor @NAME), or too long: " +
                                   path);
  }
  // An abstract name has no file to claim or remove: the kernel frees it with the socket.
  const bool abstract = IsAbstractUnixPath(path);
  std::unique_ptr<UnixPathClaim> claim;
  if (!abstract) {
    Result<std::unique_ptr<UnixPathClaim>> taken = UnixPathClaim::Take(path, addr);
    if (!taken.ok()) return taken.status();
    claim = std::move(*taken);
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::LastError("socket");
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    Status s = errno == EADDRINUSE && abstract
                   ? Status::FromErrno(EADDRINUSE, "unix:" + path +
                                                       ": another daemon of this host (network "
                                                       "namespace) is listening there")
                   : Status::LastError("listen unix:" + path);
    ::close(fd);
    return s;
  }
  return std::unique_ptr<Listener>(std::make_unique<SocketListener>(
      fd, "unix:" + path, /*tcp=*/false, abstract ? std::string() : path, std::move(claim)));
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
  int fd =
      ::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, res->ai_protocol);
  if (fd < 0) {
    ::freeaddrinfo(res);
    return Status::LastError("socket");
  }
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    Status s = Status::LastError("listen tcp:" + host_port);
    ::freeaddrinfo(res);
    ::close(fd);
    return s;
  }
  ::freeaddrinfo(res);
  struct sockaddr_storage ss = {};
  socklen_t len = sizeof ss;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  return std::unique_ptr<Listener>(std::make_unique<SocketListener>(fd, TcpName(ss), true, ""));
}

}  // namespace

Result<std::unique_ptr<Listener>> Listen(const std::string& spec) {
  if (spec.rfind("unix:", 0) == 0) return ListenUnix(spec.substr(5));
  if (spec.rfind("tcp:", 0) == 0) return ListenTcp(spec.substr(4));
  return Status::InvalidArgument("unknown transport in '" + spec + "'");
}

}  // namespace iorelay::daemon
