// The fake daemon's protocol side: just enough of the handshake and two requests.
#include "testutil/fake_daemon_testutil.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "common/frame_mac.h"
#include "common/handshake_transcript.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace iorelay::client {
namespace {

bool ReadAll(int fd, void* buf, size_t n) {
  auto* p = static_cast<uint8_t*>(buf);
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// Sends one frame; with `seal`, its tag follows (and with `tamper`, the bytes are changed after
// the tag was computed, as a man in the middle would).
bool Send(int fd, uint16_t op, uint64_t id, int32_t status, const std::vector<uint8_t>& body,
          uint16_t version = proto::kVersion, FrameSealer* seal = nullptr, bool tamper = false) {
  std::vector<uint8_t> out(proto::kHeaderBytes);
  proto::EncodeHeader({op, id, static_cast<uint32_t>(body.size()), status, version}, out.data());
  out.insert(out.end(), body.begin(), body.end());
  if (seal != nullptr) {
    FrameMac mac = seal->Next();
    mac.Update(out);
    const FrameTag tag = mac.Final();
    if (tamper) out.back() ^= 1;
    out.insert(out.end(), tag.begin(), tag.end());
  }
  return ::send(fd, out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size());
}

}  // namespace

FakeDaemon::FakeDaemon(const Secret& secret, Mode mode, int hold_ms)
    : secret_(secret), mode_(mode), hold_ms_(hold_ms) {
  char tmpl[] = "/tmp/iorfakeXXXXXX";
  dir_ = ::mkdtemp(tmpl);
  path_ = dir_ + "/d.sock";
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  std::strcpy(sun.sun_path, path_.c_str());
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&sun), sizeof sun) != 0 ||
      ::listen(listen_fd_, 16) != 0) {
    std::abort();
  }
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FakeDaemon::~FakeDaemon() {
  stop_ = true;
  acceptor_.join();
  for (auto& t : workers_) t.join();
  ::close(listen_fd_);
  ::unlink(path_.c_str());
  ::rmdir(dir_.c_str());
}

void FakeDaemon::AcceptLoop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) workers_.emplace_back([this, fd] { Serve(fd); });
  }
}

void FakeDaemon::Serve(int fd) {
  Nonce server_nonce = RandomNonce();
  std::optional<FrameSealer> to_client, from_client;  // once sealed
  std::optional<HandshakeTranscript> transcript;      // from the hello on
  const bool tamper = mode_ == Mode::kTampering;
  const int serial = connections_.fetch_add(1);
  const bool evict = mode_ == Mode::kEvictsAll || (mode_ == Mode::kEvictsTwice && serial < 2);
  while (!stop_) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    uint8_t hb[proto::kHeaderBytes];
    if (!ReadAll(fd, hb, sizeof hb)) break;
    Result<proto::FrameHeader> h = proto::DecodeHeader(hb);
    if (!h.ok()) break;
    std::vector<uint8_t> body(h->length);
    if (!ReadAll(fd, body.data(), body.size())) break;
    if (from_client) {  // a sealed request: its tag must match
      FrameTag tag;
      if (!ReadAll(fd, tag.data(), tag.size())) break;
      FrameMac mac = from_client->Next();
      mac.Update({hb, sizeof hb});
      mac.Update(body);
      if (!TagsEqual(tag, mac.Final())) break;
    }
    FrameSealer* seal = to_client ? &*to_client : nullptr;
    uint16_t reply = h->op | proto::kReplyBit;
    switch (static_cast<proto::Op>(h->op)) {
      case proto::Op::kHello: {
        if (evict) {  // (no reply: the connection is closed below)
          ::close(fd);
          return;
        }
        if (mode_ == Mode::kNextVersion) {  // refuses, as a daemon of the next version would
          Send(fd, reply, h->id, EPROTONOSUPPORT, {}, proto::kVersion + 1);
          break;
        }
        const std::vector<uint8_t> fields = proto::EncodeFields(proto::HelloReply{server_nonce});
        transcript.emplace(proto::kVersion);
        transcript->Add(proto::HeaderBytes(*h), body);
        transcript->Add(proto::HeaderBytes(proto::ReplyHeader(h->op, h->id, fields.size())),
                        fields);
        Send(fd, reply, h->id, 0, fields);
        continue;
      }
      case proto::Op::kAuth: {
        proto::AuthRequest a;
        if (!proto::DecodeFields(body, &a).ok()) break;
        // An impostor holds no secret: it accepts any proof and cannot make its own.
        if (mode_ != Mode::kImpostor &&
            !VerifyProof(secret_, server_nonce, a.client_nonce, a.proof)) {
          Send(fd, reply, h->id, EACCES, {});
          break;
        }
        proto::AuthReply r{a.join_session ? a.join_session : 42, 7, "fake", 100, 1 << 20};
        r.sealed = mode_ == Mode::kSealed || tamper ? 1 : 0;
        if (!transcript) break;
        transcript->Add(proto::HeaderBytes(*h), body);
        std::vector<uint8_t> covered = proto::EncodeFields(r);
        const auto reply_header =
            proto::HeaderBytes(proto::ReplyHeader(h->op, h->id, covered.size()));
        covered.resize(covered.size() - kProofBytes);
        transcript->Add(reply_header, covered);
        if (mode_ != Mode::kImpostor) {
          r.daemon_proof =
              TranscriptMac(secret_, TranscriptMacRole::kDaemonProof, transcript->Digest());
        }
        transcript->AddBytes(r.daemon_proof);
        Send(fd, reply, h->id, 0, proto::EncodeFields(r));
        if (r.sealed != 0) {
          const SessionKey key =
              TranscriptMac(secret_, TranscriptMacRole::kSessionKey, transcript->Digest());
          to_client.emplace(key, FrameDirection::kToClient);
          from_client.emplace(key, FrameDirection::kToDaemon);
        }
        continue;
      }
      case proto::Op::kFinished: {  // no reply; a wrong MAC closes, as iorelayd does
        proto::FinishedRequest m;
        if (!transcript || !proto::DecodeFields(body, &m).ok() ||
            !VerifyTranscriptMac(secret_, TranscriptMacRole::kClientFinished, transcript->Digest(),
                                 m.mac)) {
          break;
        }
        continue;
      }
      default:
        break;
    }
    requests_.fetch_add(1);
    if (mode_ == Mode::kSilent) continue;
    if (mode_ == Mode::kHeartbeat) {
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(hold_ms_);
      while (std::chrono::steady_clock::now() < until && !stop_) {
        Send(fd, static_cast<uint16_t>(proto::Op::kHeartbeat), 0, 0, {}, proto::kVersion, seal);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    std::vector<uint8_t> fields;
    if (h->op == static_cast<uint16_t>(proto::Op::kPwrite)) {
      fields = proto::EncodeFields(proto::CountReply{body.size() - 16});
    }
    Send(fd, reply, h->id, 0, fields, proto::kVersion, seal, tamper);
  }
  ::close(fd);
}

}  // namespace iorelay::client
