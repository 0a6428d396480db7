// kShmAttach: the checks that keep the shared-memory transport to clients of this host and
// network namespace, then the hand-over of the rings over the authenticated socket.
#include "daemon/shm_attach.h"

#include <fmt/core.h>
#include <sys/socket.h>

#include <cstring>
#include <vector>

#include "daemon/serve_connection.h"
#include "daemon/shm_transport.h"

namespace iorelay::daemon {
namespace {

// 0 when the connection may move; else the errno of the refusal.
int Refusal(Core& core, ClientConn& conn, const proto::ShmRequest& m) {
  if (!core.config.shm) return EOPNOTSUPP;
  Connection* t = conn.transport();
  if (t->capabilities().side != nullptr) return EALREADY;  // (a socket has none)
  struct sockaddr_storage ss = {};
  socklen_t len = sizeof ss;
  if (::getsockname(t->PollFd(), reinterpret_cast<sockaddr*>(&ss), &len) != 0 ||
      ss.ss_family != AF_UNIX) {
    return EOPNOTSUPP;  // TCP may cross hosts or namespaces: never bypassed
  }
  Result<HostIdentity> self = ReadHostIdentity(0);
  if (!self.ok()) return EOPNOTSUPP;
  if (m.netns_dev != self->netns_dev || m.netns_ino != self->netns_ino ||
      m.boot_id != self->boot_id) {
    return EXDEV;
  }
  // What the client claims is checked against what the kernel says of the peer, when it can
  // be read (a peer in another PID namespace may show as pid 0).
  struct ucred cred = {};
  socklen_t cred_len = sizeof cred;
  if (::getsockopt(t->PollFd(), SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) == 0 && cred.pid > 0) {
    Result<HostIdentity> peer = ReadHostIdentity(cred.pid);
    if (peer.ok() && (peer->netns_dev != self->netns_dev || peer->netns_ino != self->netns_ino)) {
      return EXDEV;
    }
  }
  if (conn.outstanding.load() != 0 || conn.queued_bytes() != 0) return EBUSY;
  return 0;
}

std::vector<uint8_t> ReplyFrame(const proto::FrameHeader& request, uint64_t ring_bytes,
                                uint32_t pipe_pages) {
  proto::ShmReply reply;
  reply.ring_bytes = ring_bytes;
  reply.pipe_pages = pipe_pages;
  std::vector<uint8_t> fields;
  fields.reserve(64);  // (also keeps GCC 12's -Wstringop-overflow false positive away)
  proto::Writer w(&fields);
  w(reply);
  proto::FrameHeader h;
  h.op = static_cast<uint16_t>(static_cast<uint16_t>(proto::Op::kShmAttach) | proto::kReplyBit);
  h.id = request.id;
  h.length = static_cast<uint32_t>(fields.size());
  std::vector<uint8_t> frame(proto::kHeaderBytes + fields.size());
  proto::EncodeHeader(h, frame.data());
  std::memcpy(frame.data() + proto::kHeaderBytes, fields.data(), fields.size());
  return frame;
}

}  // namespace

bool AttachShm(Core& core, const ConnPtr& conn, const proto::FrameHeader& h,
               std::span<const uint8_t> payload) {
  const proto::Op op = proto::Op::kShmAttach;
  proto::ShmRequest m;
  if (!proto::DecodeFields(payload, &m).ok()) {
    LogClose(conn, "malformed shm_attach");
    return false;
  }
  ConnCounters& counters = core.stats->conn;
  int refusal = Refusal(core, *conn, m);
  Result<std::unique_ptr<ShmConnection>> shm = Status::Ok();
  if (refusal == 0) {
    shm = ShmConnection::Create(core.config.shm_ring_bytes, core.config.shm_in_place,
                                core.config.shm_pipes ? core.pipes.pipe_bytes() : 0,
                                &counters.shm_open);
    if (shm.ok()) (*shm)->set_poll_us(core.config.shm_poll_us);
    if (!shm.ok()) {
      fmt::print(stderr, "iorelayd: shared memory for {}: {}; it stays on its socket\n",
                 conn->transport()->peer(), shm.status().ToString());
      refusal = shm.status().code();
    }
  }
  if (refusal != 0) {
    counters.shm_refused.fetch_add(1);
    conn->ReplyError(op, h.id, refusal);
    return true;
  }
  const std::vector<uint8_t> frame = ReplyFrame(h, (*shm)->ring_bytes(), (*shm)->pipe_pages());
  bool handed_over = false;
  Status s = conn->ReplaceTransport(
      [&](std::unique_ptr<Connection>& socket) -> Result<std::unique_ptr<Connection>> {
        IORELAY_RETURN_IF_ERROR((*shm)->HandOver(socket, frame.data(), frame.size()));
        handed_over = true;
        return std::unique_ptr<Connection>(std::move(*shm));
      });
  if (!s.ok()) {
    if (!handed_over && s.code() == EBUSY) {
      counters.shm_refused.fetch_add(1);
      conn->ReplyError(op, h.id, EBUSY);
      return true;
    }
    LogClose(conn, "shared-memory hand-over failed: " + s.ToString());
    return false;
  }
  counters.shm_attached.fetch_add(1);
  return true;
}

}  // namespace iorelay::daemon
