// Connection::AttachShm: the client's half of moving a connection to shared memory. The
// request names this process's network namespace and boot; the reply brings the memfd and the
// daemon's doorbell as SCM_RIGHTS on the authenticated socket, which is kept only to notice the
// daemon's end.
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "client/connection.h"
#include "client/internal_fds.h"
#include "common/raw_close.h"
#include "proto/wire.h"

namespace iorelay::client {
namespace {

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

// memfd, the daemon's doorbell, and with pipes the client's ends of the two pipes.
constexpr int kShmFds = 4;

// Takes the descriptors of one received message as internal ones (any beyond kShmFds are
// closed).
void TakeFds(struct msghdr* m, std::vector<int>* fds) {
  for (struct cmsghdr* c = CMSG_FIRSTHDR(m); c != nullptr; c = CMSG_NXTHDR(m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (fds->size() < kShmFds) {
        fds->push_back(AdoptInternalFd(fd));
      } else {
        RawClose(fd);
      }
    }
  }
}

void CloseAll(std::vector<int>& fds) {
  for (int fd : fds) CloseInternalFd(fd);
  fds.clear();
}

}  // namespace

Status Connection::AttachShm() {
  Result<HostIdentity> me = ReadHostIdentity(0);
  if (!me.ok() || rpos_ != rend_) return Status::Ok();  // stays on the socket
  proto::ShmRequest req;
  req.netns_dev = me->netns_dev;
  req.netns_ino = me->netns_ino;
  req.boot_id = me->boot_id;
  const uint64_t id = next_id_++;
  deadline_ms_ = NowMs() + timeout_ms_;
  IORELAY_RETURN_IF_ERROR(Send(proto::Op::kShmAttach, id, proto::EncodeFields(req), {}));
  // The reply's header, with the descriptors attached to its first byte.
  uint8_t header[proto::kHeaderBytes];
  size_t got = 0;
  std::vector<int> fds;
  while (got < sizeof header) {
    struct iovec v = {header + got, sizeof header - got};
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kShmFds)] = {};
    struct msghdr m = {};
    m.msg_iov = &v;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(fd_, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n > 0) TakeFds(&m, &fds);
    if (n > 0) got += static_cast<size_t>(n);
    Status s = AfterReceive(n);
    if (!s.ok()) {
      CloseAll(fds);
      return s;
    }
  }
  Result<proto::FrameHeader> h = proto::DecodeHeader(header);
  const uint16_t want_op =
      static_cast<uint16_t>(static_cast<uint16_t>(proto::Op::kShmAttach) | proto::kReplyBit);
  if (!h.ok() || h->id != id || h->op != want_op || h->length > 4096) {
    CloseAll(fds);
    return Fail(Status::IOError("protocol error: unexpected reply to shm_attach"), false);
  }
  std::vector<uint8_t> fields(h->length);
  struct iovec fv = {fields.data(), fields.size()};
  if (Status s = ReceiveInto(&fv, 1, fields.size()); !s.ok()) {
    CloseAll(fds);
    return s;
  }
  if (h->status != 0) {  // refused (off, another namespace...): the socket carries on
    CloseAll(fds);
    return Status::Ok();
  }
  proto::ShmReply reply;
  if (!proto::DecodeFields(fields, &reply).ok() || fds.size() != (reply.pipe_pages > 0 ? 4u : 2u)) {
    CloseAll(fds);
    return Fail(Status::IOError("protocol error: bad shm_attach reply"), false);
  }
  // From here the daemon reads only the rings: a failure breaks the connection.
  Result<std::unique_ptr<ShmChannel>> ch =
      reply.pipe_pages > 0
          ? ShmChannel::Map(fds[0], fds[1], reply.ring_bytes, fds[2], fds[3], reply.pipe_pages)
          : ShmChannel::Map(fds[0], fds[1], reply.ring_bytes);
  if (!ch.ok()) return Fail(ch.status(), false);
  shm_ = std::move(*ch);
  return Status::Ok();
}

}  // namespace iorelay::client
