// Address parsing and non-blocking connect with a bound; only socket-level libc calls.
#include "client/address.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "client/internal_fds.h"
#include "common/raw_close.h"
#include "common/unix_address.h"

namespace iorelay::client {
namespace {

Status ConnectFailed(const Address& addr, int err) {
  char buf[128];
  std::string why = strerror_r(err, buf, sizeof buf);
  return Status::IOError("cannot connect to daemon at " + addr.text + " (" + why + ")");
}

// Who may be at the other end of a Unix socket: this user, or root (who can read the job's
// files anyway). Checked before anything is sent, so a process of another user that took the
// socket's path (or an abstract name, which has no permissions) learns nothing and answers
// nothing: the handshake's proof alone would not stop it from relaying a live handshake.
Status CheckUnixPeer(int fd, const Address& addr) {
  struct ucred peer {};
  socklen_t len = sizeof peer;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
    return Status::LastError("credentials of the daemon at " + addr.text);
  }
  const uid_t self = ::geteuid();
  if (peer.uid == self || peer.uid == 0) return Status::Ok();
  return Status::FromErrno(
      EACCES, "the process at " + addr.text + " (pid " + std::to_string(peer.pid) +
                  ") runs as uid " + std::to_string(peer.uid) + ", not as this user (uid " +
                  std::to_string(self) + ") or root: refused before sending anything");
}

// Connects `fd` to `sa`, waiting at most timeout_ms; returns 0 or an errno.
int ConnectWithin(int fd, const sockaddr* sa, socklen_t len, int timeout_ms) {
  if (::connect(fd, sa, len) == 0) return 0;
  if (errno != EINPROGRESS && errno != EAGAIN && errno != EINTR) return errno;
  pollfd p{fd, POLLOUT, 0};
  int r;
  do {
    r = ::poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return ETIMEDOUT;
  if (r < 0) return errno;
  int err = 0;
  socklen_t elen = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) return errno;
  return err;
}

// A Unix socket whose listener's backlog is full: a non-blocking connect says EAGAIN, and
// nothing completes later. Made again blocking, the connect waits for room in the backlog, as
// long as SO_SNDTIMEO allows (the kernel bounds that wait with it); then both are put back.
// (fcntl by system call, as elsewhere in the client: in the interposer, fcntl is the wrapper.)
int ConnectUnixWithin(int fd, const sockaddr* sa, socklen_t len, int timeout_ms) {
  if (::connect(fd, sa, len) == 0) return 0;
  if (errno != EAGAIN) return errno;
  const long flags = syscall(SYS_fcntl, fd, F_GETFL);
  timeval bound{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  if (flags < 0 || syscall(SYS_fcntl, fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound) != 0) {
    return errno;
  }
  int r;
  do {
    r = ::connect(fd, sa, len);
  } while (r != 0 && errno == EINTR);
  int err = r == 0 ? 0 : errno;
  if (err == EAGAIN || err == EINPROGRESS) err = ETIMEDOUT;
  timeval none{};
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none) != 0 ||
      syscall(SYS_fcntl, fd, F_SETFL, flags) != 0) {
    if (err == 0) err = errno;
  }
  return err;
}

int NewSocket(int domain) {
  return ::socket(domain, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

}  // namespace

Result<Address> ParseAddress(const std::string& text) {
  Address a;
  a.text = text;
  if (text.rfind("unix:", 0) == 0) {
    a.kind = Address::Kind::kUnix;
    a.path = text.substr(5);
    sockaddr_un sun;
    if (FillUnixAddress(a.path, &sun) == 0) {
      return Status::InvalidArgument("bad unix address '" + text +
                                     "' (unix:/ABSOLUTE/PATH or unix:@ABSTRACT-NAME)");
    }
    return a;
  }
  if (text.rfind("tcp:", 0) == 0) {
    a.kind = Address::Kind::kTcp;
    std::string rest = text.substr(4);
    size_t colon = rest.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
      return Status::InvalidArgument("bad tcp address '" + text + "' (tcp:HOST:PORT)");
    }
    a.host = rest.substr(0, colon);
    if (a.host.size() > 2 && a.host.front() == '[' && a.host.back() == ']') {
      a.host = a.host.substr(1, a.host.size() - 2);
    }
    std::string port = rest.substr(colon + 1);
    int p = 0;
    for (char ch : port) {
      if (ch < '0' || ch > '9' || p > 65535) {
        return Status::InvalidArgument("bad port in address '" + text + "'");
      }
      p = p * 10 + (ch - '0');
    }
    if (p <= 0 || p > 65535) return Status::InvalidArgument("bad port in address '" + text + "'");
    a.port = p;
    return a;
  }
  return Status::InvalidArgument("bad daemon address '" + text +
                                 "' (tcp:HOST:PORT, unix:PATH or unix:@NAME)");
}

Result<int> ConnectSocket(const Address& addr, int timeout_ms) {
  if (addr.kind == Address::Kind::kUnix) {
    sockaddr_un sun;
    const socklen_t len = FillUnixAddress(addr.path, &sun);
    if (len == 0) return Status::InvalidArgument("bad unix address '" + addr.text + "'");
    int fd = NewSocket(AF_UNIX);
    if (fd < 0) return Status::LastError("socket");
    int err = ConnectUnixWithin(fd, reinterpret_cast<sockaddr*>(&sun), len, timeout_ms);
    if (err != 0) {
      RawClose(fd);
      return ConnectFailed(addr, err);
    }
    if (Status peer = CheckUnixPeer(fd, addr); !peer.ok()) {
      RawClose(fd);
      return peer;
    }
    return AdoptInternalFd(fd);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string port = std::to_string(addr.port);
  int gai = ::getaddrinfo(addr.host.c_str(), port.c_str(), &hints, &res);
  if (gai != 0) {
    return Status::IOError("cannot resolve " + addr.text + ": " + gai_strerror(gai));
  }
  int last_err = ECONNREFUSED;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    int fd = NewSocket(ai->ai_family);
    if (fd < 0) {
      last_err = errno;
      continue;
    }
    int err = ConnectWithin(fd, ai->ai_addr, ai->ai_addrlen, timeout_ms);
    if (err == 0) {
      ::freeaddrinfo(res);
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return AdoptInternalFd(fd);
    }
    last_err = err;
    RawClose(fd);
  }
  ::freeaddrinfo(res);
  return ConnectFailed(addr, last_err);
}

}  // namespace iorelay::client
