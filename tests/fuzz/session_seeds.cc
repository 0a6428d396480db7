// Writes the seed corpus of session_fuzz (tests/fuzz/corpus/session/): request sequences a
// client really sends after authenticating (files, data, offsets, metadata, directories, locks,
// a few refusals), so that the fuzzer starts from frames the daemon accepts. Handles are the
// daemon's first ids (a fresh core per input numbers them from 1). Each sequence goes whole,
// byte by byte, and whole on a sealed connection (the first byte, see session_fuzz.cc).
// The frames carry the protocol version (proto::kVersion): write them anew when it changes,
// or the daemon refuses every seed at its first frame.
//   build-fuzz/tests/fuzz/session_seeds tests/fuzz/corpus/session
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "proto/messages.h"
#include "proto/wire.h"

namespace {

namespace proto = iorelay::proto;
using proto::Op;
using Bytes = std::vector<uint8_t>;

class Seed {
 public:
  template <typename Msg>
  Seed& Add(Op op, const Msg& msg, const Bytes& tail = {}) {
    Bytes fields = proto::EncodeFields(msg);
    fields.insert(fields.end(), tail.begin(), tail.end());
    proto::FrameHeader h;
    h.op = static_cast<uint16_t>(op);
    h.id = next_id_++;
    h.length = static_cast<uint32_t>(fields.size());
    uint8_t header[proto::kHeaderBytes];
    proto::EncodeHeader(h, header);
    bytes_.insert(bytes_.end(), header, header + sizeof header);
    bytes_.insert(bytes_.end(), fields.begin(), fields.end());
    return *this;
  }
  bool Write(const std::string& path, uint8_t chunk) const {
    std::ofstream out(path, std::ios::binary);
    out.put(static_cast<char>(chunk));
    out.write(reinterpret_cast<const char*>(bytes_.data()),
              static_cast<std::streamsize>(bytes_.size()));
    return static_cast<bool>(out);
  }

 private:
  Bytes bytes_;
  uint64_t next_id_ = 3;  // after the handshake's two frames
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: session_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const Bytes data(300, 'x');
  const int rw = O_CREAT | O_RDWR;
  std::vector<std::pair<std::string, Seed>> seeds;
  seeds.emplace_back("file_io", Seed()
                                    .Add(Op::kOpen, proto::OpenRequest{"/data/f", rw, 0644})
                                    .Add(Op::kPwrite, proto::PwriteRequest{1, 0}, data)
                                    .Add(Op::kPad, proto::PadRequest{std::string(37, '\0')})
                                    .Add(Op::kPwrite, proto::PwriteRequest{1, 300}, data)
                                    .Add(Op::kPread, proto::PreadRequest{1, 100, 400})
                                    .Add(Op::kFstat, proto::HandleRequest{1})
                                    .Add(Op::kFsync, proto::FsyncRequest{1, 0})
                                    .Add(Op::kClose, proto::HandleRequest{1}));
  seeds.emplace_back("offsets",
                     Seed()
                         .Add(Op::kOpen, proto::OpenRequest{"/data/g", rw | O_APPEND, 0600})
                         .Add(Op::kWrite, proto::WriteRequest{1}, data)
                         .Add(Op::kLseek, proto::LseekRequest{1, 10, SEEK_SET})
                         .Add(Op::kRead, proto::ReadRequest{1, 50})
                         .Add(Op::kFtruncate, proto::FtruncateRequest{1, 20})
                         .Add(Op::kSetfl, proto::SetflRequest{1, 0})
                         .Add(Op::kFchmod, proto::FchmodRequest{1, 0640})
                         .Add(Op::kFutimens, proto::FutimensRequest{1, {1, 2, 3, UTIME_OMIT}})
                         .Add(Op::kFstatfs, proto::HandleRequest{1}));
  seeds.emplace_back("paths", Seed()
                                  .Add(Op::kMkdir, proto::MkdirRequest{"/data/d", 0755})
                                  .Add(Op::kOpen, proto::OpenRequest{"/data/d/a", rw, 04755})
                                  .Add(Op::kRename, proto::RenameRequest{"/data/d/a", "/data/b", 0})
                                  .Add(Op::kStat, proto::StatRequest{"/data/b", 1})
                                  .Add(Op::kAccess, proto::AccessRequest{"/data/b", 4})
                                  .Add(Op::kChmod, proto::ChmodRequest{"/data/b", 06777})
                                  .Add(Op::kTruncate, proto::TruncateRequest{"/data/b", 4096})
                                  .Add(Op::kUtimens, proto::UtimensRequest{"/data/b", {}, 1})
                                  .Add(Op::kSymlink, proto::SymlinkRequest{"../b", "/data/d/s"})
                                  .Add(Op::kLink, proto::LinkRequest{"/data/d/s", "/data/h", 1})
                                  .Add(Op::kReaddir, proto::ReaddirRequest{"/data", 0})
                                  .Add(Op::kReadlink, proto::PathRequest{"/data/b"})
                                  .Add(Op::kStatfs, proto::PathRequest{"/data"})
                                  .Add(Op::kUnlink, proto::PathRequest{"/data/b"})
                                  .Add(Op::kRmdir, proto::PathRequest{"/data/d"}));
  seeds.emplace_back("locks",
                     Seed()
                         .Add(Op::kOpen, proto::OpenRequest{"/data/l", rw, 0644})
                         .Add(Op::kFstat, proto::HandleRequest{1})
                         .Add(Op::kLock, proto::LockRequest{0, 0, F_SETLK, F_WRLCK, 0, 100, 7})
                         .Add(Op::kLock, proto::LockRequest{0, 0, F_GETLK, F_RDLCK, 50, 0, 7})
                         .Add(Op::kUnlockAll, proto::UnlockAllRequest{0, 0})
                         .Add(Op::kClose, proto::HandleRequest{1}));
  seeds.emplace_back("refusals",
                     Seed()
                         .Add(Op::kOpen, proto::OpenRequest{"/data/../etc/passwd", O_RDONLY, 0})
                         .Add(Op::kOpen, proto::OpenRequest{"/elsewhere", O_RDONLY, 0})
                         .Add(Op::kPread, proto::PreadRequest{99, 0, 10})
                         .Add(Op::kClose, proto::HandleRequest{99})
                         .Add(Op::kAuth, proto::AuthRequest{})
                         .Add(Op::kPing, proto::Empty{})
                         .Add(Op::kStats, proto::Empty{}));
  seeds.emplace_back("fork", Seed()
                                 .Add(Op::kOpen, proto::OpenRequest{"/data/h", rw, 0644})
                                 .Add(Op::kAdopt, proto::AdoptRequest{1, 0, {1}})
                                 .Add(Op::kClose, proto::HandleRequest{1}));
  // The admin ops, on a session of the admin credential (byte 0's bit 0x40): admissions the
  // daemon refuses (no such root, a symlinked one, a malformed one), then renew, release and
  // revoke of the start-time job and of unknown ones.
  proto::AdmitRequest admit;
  admit.job = "j";
  admit.roots = {"/j=/nonexistent"};
  admit.weight = 3;
  admit.lease_ms = 1000;
  proto::AdmitRequest bad = admit;
  bad.roots = {"relative=/tmp", "/k=/proc/self/cwd"};
  Seed admin_seed;
  admin_seed.Add(Op::kJobs, proto::Empty{})
      .Add(Op::kAdmit, admit)
      .Add(Op::kAdmit, bad)
      .Add(Op::kRenew, proto::RenewRequest{"app", 500})
      .Add(Op::kRenew, proto::RenewRequest{"nobody", 0})
      .Add(Op::kRelease, proto::JobRequest{"nobody"})
      .Add(Op::kRevoke, proto::JobRequest{"nobody"})
      .Add(Op::kStats, proto::Empty{})
      .Add(Op::kOpen, proto::OpenRequest{"/data/f", rw, 0644})  // no roots: refused
      .Add(Op::kRevoke, proto::JobRequest{"app"});
  int failed = 0;
  for (const auto& [name, seed] : seeds) {
    failed += !seed.Write(dir + "/" + name, 0);
    failed += !seed.Write(dir + "/" + name + "_bytewise", 1);
    failed += !seed.Write(dir + "/" + name + "_sealed", 0x80);  // (session_fuzz adds the tags)
  }
  failed += !admin_seed.Write(dir + "/admin", 0x40);
  failed += !admin_seed.Write(dir + "/admin_bytewise", 0x41);
  failed += !admin_seed.Write(dir + "/admin_sealed", 0xc0);
  // A job's session asking for the admin ops: each refused (EACCES).
  failed += !Seed()
                 .Add(Op::kJobs, proto::Empty{})
                 .Add(Op::kAdmit, admit)
                 .Add(Op::kRevoke, proto::JobRequest{"app"})
                 .Write(dir + "/admin_refused", 0);
  return failed == 0 ? 0 : 1;
}
