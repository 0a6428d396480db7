// libFuzzer target over a whole daemon session: a real handshake, then the input's bytes as the
// client's frames, handled by the daemon's own code (FrameReader, HandleFrame, the handlers, the
// scheduler, the POSIX backend on a temporary export root) in this process, with no sockets and
// no threads in the way. Deterministic, so that one input reproduces a crash: the server nonce is
// fixed (Core::make_nonce), metadata handlers run inline (a TaskPool of 0 threads), data requests
// are drained after each frame, and the export root is emptied after each input.
//
// One daemon core serves every input, as one daemon serves session after session (building a
// core, with its threads, for each input cost most of the time). After each input the core must
// hold nothing of the session: no session, open file, record lock, parked lock wait or in-flight
// byte; anything left is a finding (abort). The counters start afresh for each input. What does
// carry over (handle and session numbers, the scheduler's state, the buffer pool's free buffers)
// does not decide how a frame is handled, so an input that crashes crashes alone too (libFuzzer
// replays it in a new process).
//
// Input: byte 0 says how the connection behaves: its high bit, sealed (as over TCP: the harness
// appends the right tag to each frame of the input, so that the frames reach the daemon's
// handlers and the tagging of replies is exercised too); bit 0x40, authenticated with the admin
// credential (the admin ops: admit, revoke, renew, release, jobs) instead of the job's; its low
// 6 bits, how many bytes each receive returns (0: all that is left). The rest is what the client
// sends after it has authenticated and confirmed the handshake (kFinished, which the harness
// computes from the daemon's auth reply, as a client does).
#include <fmt/core.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/auth.h"
#include "common/frame_mac.h"
#include "common/handshake_transcript.h"
#include "daemon/daemon.h"
#include "daemon/job_lifecycle.h"
#include "daemon/serve_connection.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace {

using iorelay::Nonce;
using iorelay::Secret;
namespace daemon = iorelay::daemon;
namespace proto = iorelay::proto;

// The client's bytes, served `chunk` at a time, then the end of the stream; replies are
// counted and dropped.
class InputConnection final : public daemon::Connection {
 public:
  InputConnection(std::vector<uint8_t> bytes, size_t chunk, bool sealed)
      : bytes_(std::move(bytes)), chunk_(chunk), sealed_(sealed) {}
  iorelay::Result<size_t> Recv(void* buf, size_t n) override {
    const size_t take = std::min({n, chunk_, bytes_.size() - pos_});
    if (take > 0) std::copy_n(bytes_.data() + pos_, take, static_cast<uint8_t*>(buf));
    pos_ += take;
    return take;  // 0: end of stream
  }
  // More of the client's bytes, after those given so far.
  void Append(std::span<const uint8_t> more) {
    bytes_.insert(bytes_.end(), more.begin(), more.end());
  }
  // The payload of the last reply sent (the auth reply, once the handshake's frames are handled).
  const std::vector<uint8_t>& last_reply() const { return last_reply_; }
  iorelay::Result<size_t> SendSome(const struct iovec* iov, int n) override {
    // Each call is one whole frame (nothing is ever left queued), its header first.
    last_reply_.clear();
    for (int i = 0; i < n; ++i) {
      const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
      last_reply_.insert(last_reply_.end(), p, p + iov[i].iov_len);
    }
    last_reply_.erase(last_reply_.begin(),
                      last_reply_.begin() + std::min(last_reply_.size(), proto::kHeaderBytes));
    if (trace_ && n > 0 && iov[0].iov_len >= proto::kHeaderBytes) {
      iorelay::Result<proto::FrameHeader> h =
          proto::DecodeHeader(static_cast<const uint8_t*>(iov[0].iov_base));
      if (h.ok()) {
        std::fprintf(stderr, "session_fuzz: reply %s id %llu status %d length %u\n",
                     proto::OpName(static_cast<proto::Op>(h->op & ~proto::kReplyBit)),
                     static_cast<unsigned long long>(h->id), h->status, h->length);
      }
    }
    size_t total = 0;
    for (int i = 0; i < n; ++i) total += iov[i].iov_len;
    return total;
  }
  void Shutdown() override {}
  int PollFd() const override { return -1; }  // (poll ignores it: the client is never gone)
  std::string peer() const override { return "session_fuzz"; }
  bool OverNetwork() const override { return sealed_; }

 private:
  std::vector<uint8_t> bytes_;
  size_t chunk_;
  bool sealed_;
  size_t pos_ = 0;
  std::vector<uint8_t> last_reply_;
  // SESSION_FUZZ_TRACE=1 prints every reply (to see what an input did when replaying it).
  const bool trace_ = std::getenv("SESSION_FUZZ_TRACE") != nullptr;
};

constexpr rlim_t kMaxFileBytes = 64 << 20;

Nonce FixedNonce() {
  Nonce n;
  n.fill(0x5a);
  return n;
}

// One credential's key file and handshake.
struct Identity {
  std::string key_file;
  Secret secret{};
  std::vector<uint8_t> handshake;    // hello and auth frames, valid under FixedNonce
  std::vector<uint8_t> auth_fields;  // the auth request's payload, for the transcript
};

struct Setup {
  std::string dir, root;
  Identity job;    // the job admitted at start ("app")
  Identity admin;  // the admin credential: its sessions reach the admin ops
};

// Appends `in` to `out` frame by frame, each followed by its tag under `key`, as a client of a
// sealed connection sends them (frames are cut by their headers' lengths; a last, incomplete
// frame goes as it is).
void AppendSealed(std::span<const uint8_t> in, const iorelay::SessionKey& key,
                  std::vector<uint8_t>* out) {
  iorelay::FrameSealer sealer(key, iorelay::FrameDirection::kToDaemon);
  size_t pos = 0;
  while (in.size() - pos >= proto::kHeaderBytes) {
    uint32_t length;
    std::memcpy(&length, in.data() + pos + 16, sizeof length);  // (wire.h: the header's layout)
    const size_t n = std::min<size_t>(proto::kHeaderBytes + uint64_t{length}, in.size() - pos);
    iorelay::FrameMac mac = sealer.Next();
    mac.Update(in.subspan(pos, n));
    out->insert(out->end(), in.begin() + static_cast<ptrdiff_t>(pos),
                in.begin() + static_cast<ptrdiff_t>(pos + n));
    pos += n;
    if (n < proto::kHeaderBytes + uint64_t{length}) return;  // cut short: no tag
    const iorelay::FrameTag tag = mac.Final();
    out->insert(out->end(), tag.begin(), tag.end());
  }
  out->insert(out->end(), in.begin() + static_cast<ptrdiff_t>(pos), in.end());
}

std::vector<uint8_t> Frame(proto::Op op, uint64_t id, const std::vector<uint8_t>& fields) {
  proto::FrameHeader h;
  h.op = static_cast<uint16_t>(op);
  h.id = id;
  h.length = static_cast<uint32_t>(fields.size());
  std::vector<uint8_t> out(proto::kHeaderBytes);
  proto::EncodeHeader(h, out.data());
  out.insert(out.end(), fields.begin(), fields.end());
  return out;
}

// A credential of bytes `fill`, written to `key_file` as iorelay writes it (64 hex digits,
// 0600), and its handshake.
void MakeIdentity(const std::string& key_file, uint8_t fill, Identity* id) {
  id->key_file = key_file;
  id->secret.fill(fill);
  {
    std::ofstream key(key_file);
    for (size_t i = 0; i < id->secret.size(); ++i) key << fmt::format("{:02x}", fill);
  }
  if (::chmod(key_file.c_str(), 0600) != 0) std::abort();
  proto::AuthRequest auth;
  auth.client_nonce.fill(0x17);
  auth.proof = iorelay::ComputeProof(id->secret, FixedNonce(), auth.client_nonce);
  auth.key_id = iorelay::KeyIdOf(id->secret);
  auth.pid = 1;
  auth.host = "fuzz";
  id->auth_fields = proto::EncodeFields(auth);
  id->handshake = Frame(proto::Op::kHello, 1, {});
  std::vector<uint8_t> a = Frame(proto::Op::kAuth, 2, id->auth_fields);
  id->handshake.insert(id->handshake.end(), a.begin(), a.end());
}

Setup* MakeSetup() {
  auto* s = new Setup;
  // In memory where there is a tmpfs: creating and removing the inputs' files and directories
  // on a disk file system (ext4's inode allocation) took a third of the time.
  std::string tmpl = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  tmpl += "/iorelay-session-fuzz-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
  s->dir = tmpl;
  s->root = s->dir + "/root";
  if (::mkdir(s->root.c_str(), 0755) != 0) std::abort();
  MakeIdentity(s->dir + "/app.key", 0x42, &s->job);
  MakeIdentity(s->dir + "/admin.key", 0x43, &s->admin);
  return s;
}

int RemoveEntry(const char* path, const struct stat*, int, struct FTW* ftw) {
  if (ftw->level > 0) ::remove(path);
  return 0;
}

const Setup& TheSetup() {
  static Setup* s = [] {
    // Files are capped at 64 MiB (larger writes, truncates and fallocates get EFBIG), so that
    // no input fills the disk; the daemon's own limits are what is fuzzed, not the disk's.
    const struct rlimit fsize = {kMaxFileBytes, kMaxFileBytes};
    if (::setrlimit(RLIMIT_FSIZE, &fsize) != 0) std::abort();
    ::signal(SIGXFSZ, SIG_IGN);
    Setup* made = MakeSetup();
    std::atexit([] {
      ::nftw(TheSetup().dir.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
      ::rmdir(TheSetup().dir.c_str());
    });
    return made;
  }();
  return *s;
}

std::unique_ptr<daemon::Core> MakeCore(const Setup& s) {
  daemon::Config c;
  c.exports = {{"/data", s.root}};
  c.credentials = {{"app", s.job.key_file, 1}};
  c.admin_credential = s.admin.key_file;
  c.workers = 1;
  // Small bounds, so that the input can reach them.
  c.max_open_files = 8;
  iorelay::Result<std::unique_ptr<daemon::Core>> core = daemon::BuildCore(c);
  if (!core.ok()) {
    std::fprintf(stderr, "session_fuzz: %s\n", core.status().ToString().c_str());
    std::abort();
  }
  (*core)->make_nonce = FixedNonce;
  (*core)->handlers = std::make_unique<daemon::TaskPool>(0);
  return std::move(*core);
}

// Aborts when the session that just ended left anything in the core.
void CheckNothingLeft(daemon::Core& core) {
  const char* left = nullptr;
  if (!core.sessions.All().empty()) left = "a session";
  if (core.locks.spans() != 0) left = "a record lock";
  if (core.locks.parked() != 0) left = "a parked lock wait";
  for (const daemon::JobPtr& job : core.jobs.All()) {
    if (job->stats()->inflight.bytes() != 0) left = "in-flight bytes";
    if (job->stats()->inflight.parked() != 0) left = "a connection parked on its app";
    if (job->connections() != 0) left = "a connection counted against its job";
  }
  if (left != nullptr) {
    std::fprintf(stderr, "session_fuzz: the session's end left %s in the daemon\n", left);
    std::abort();
  }
}

// What the client sends after the auth reply `reply`: kFinished over the transcript, then
// `input`, tagged under the session key when sealed.
std::vector<uint8_t> ConfirmedInput(const Identity& s, const std::vector<uint8_t>& reply,
                                    std::span<const uint8_t> input, bool sealed) {
  iorelay::ClientTranscript t(proto::kVersion);
  const auto hello = static_cast<uint16_t>(proto::Op::kHello);
  const auto auth = static_cast<uint16_t>(proto::Op::kAuth);
  const std::vector<uint8_t> hello_fields = proto::EncodeFields(proto::HelloReply{FixedNonce()});
  t.AddHello(proto::HeaderBytes({hello, 1, 0, 0}), {},
             proto::HeaderBytes(proto::ReplyHeader(hello, 1, hello_fields.size())), hello_fields);
  if (!t.AddAuth(
          s.secret, proto::HeaderBytes({auth, 2, static_cast<uint32_t>(s.auth_fields.size()), 0}),
          s.auth_fields, proto::HeaderBytes(proto::ReplyHeader(auth, 2, reply.size())), reply)) {
    std::fprintf(stderr, "session_fuzz: the daemon's proof did not verify\n");
    std::abort();
  }
  proto::FinishedRequest finished;
  finished.mac = t.Finished(s.secret);
  std::vector<uint8_t> plain = Frame(proto::Op::kFinished, 3, proto::EncodeFields(finished));
  plain.insert(plain.end(), input.begin(), input.end());
  if (!sealed) return plain;
  std::vector<uint8_t> out;
  AppendSealed(plain, t.SealingKey(s.secret), &out);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Setup& s = TheSetup();
  static std::unique_ptr<daemon::Core> core_kept = MakeCore(s);
  // An input that revoked or released the start-time job leaves a daemon nobody else could
  // authenticate to: the next input gets a new core.
  if (core_kept->jobs.Find("app") == nullptr) core_kept = MakeCore(s);
  daemon::Core* const core = core_kept.get();
  static std::vector<uint8_t> scratch(64 * 1024);
  const bool sealed = (data[0] & 0x80) != 0;
  const Identity& who = (data[0] & 0x40) != 0 ? s.admin : s.job;
  {  // (the connection and the reader use the core: gone before it)
    const size_t chunk = (data[0] & 0x3f) == 0 ? SIZE_MAX : (data[0] & 0x3f);
    auto input = std::make_unique<InputConnection>(who.handshake, chunk, sealed);
    InputConnection* const client = input.get();
    auto conn = std::make_shared<daemon::ClientConn>(std::move(input), &core->buffers);
    daemon::FrameReader reader(&core->buffers);
    daemon::ConnProtocol protocol(daemon::ProtocolSettingsFor(*core, *conn->transport()));
    bool confirmed = false;
    for (int frames = 0;;) {
      // As the event loop does: authenticated once the handshake's two frames are handled;
      // then the client confirms the transcript and sends the input's frames.
      if (frames == 2 && conn->session == nullptr) {
        std::fprintf(stderr, "session_fuzz: the handshake failed\n");
        std::abort();
      }
      if (frames == 2 && !confirmed) {
        client->Append(ConfirmedInput(who, client->last_reply(), {data + 1, size - 1}, sealed));
        confirmed = true;
      }
      reader.NewTurn();
      const daemon::FrameReader::Step step =
          reader.Next(conn->transport(), conn->session != nullptr, scratch);
      // kAgain: a short receive (the loop would wait for the next edge; here more is there).
      if (step == daemon::FrameReader::Step::kAgain) continue;
      if (step != daemon::FrameReader::Step::kFrame) break;  // end, or a malformed frame
      ++frames;
      const bool keep = daemon::HandleFrame(*core, conn, reader, protocol, core->clock.NowNs());
      core->dispatcher->Drain();
      if (!keep) break;
    }
    conn->Shutdown();
    daemon::EndConnection(*core, conn);
    core->dispatcher->Drain();
  }
  // Jobs the input admitted go, as a pool's arbiter would take them back.
  for (const daemon::JobPtr& job : core->jobs.All()) {
    if (!job->spec().at_start) (void)daemon::RevokeJob(*core, job->name());
  }
  CheckNothingLeft(*core);
  // Counters start afresh: a stats request would otherwise render every file of every earlier
  // input (up to the daemon's bound), which slowed the target fivefold as its corpus grew.
  core->stats = std::make_unique<daemon::Stats>(std::vector<std::string>{"app"});
  ::nftw(s.root.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
  return 0;
}
