// Every message of the iorelay protocol, with its fields in wire order.
//
// Conversation: the client sends kHello; the daemon answers with a nonce; the client
// sends kAuth with its proof (common/auth.h); the daemon answers with the session and its own
// proof over the transcript so far (common/handshake_transcript.h), or EACCES and closes; the
// client checks that proof and sends kFinished, its MAC over the whole transcript, with no
// reply (the daemon closes on a wrong one, and takes no other frame before it). After that the
// client sends requests with ids of its choosing (unique per connection) and the daemon answers
// each once, in any order. While a connection has requests outstanding the daemon sends kHeartbeat
// frames (id 0, no payload) every heartbeat_ms, so a client tells a slow request (a lock wait, a
// scheduler hold) from a dead or stopped daemon. A heartbeat with the reply bit may carry a
// payload, which the client skips: over shared memory the daemon sends one as padding so that
// the data of the O_DIRECT read reply after it starts on the file's alignment in the ring.
//
// Handles are daemon-wide ids of open file descriptions (offset, flags). A session is
// one client process: several connections may join it (kAuth with join_*), and its
// handles, locks and accounting are shared by them. Paths are the client's absolute
// paths; the daemon maps them through its exports and resolves them beneath the root.
// Requests marked [tail] carry bulk data after their fields; replies marked [tail]
// return it after theirs.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/auth.h"
#include "common/key_id.h"
#include "proto/ops.h"

namespace iorelay::proto {

// The ops (ops.h has one row each). Replies with bulk data after their fields: kStats (the
// daemon's counters as JSON), kPread and kRead (the bytes read, possibly fewer at EOF), kReadlink
// (the link's target). kRead and kWrite work at and advance the handle's shared offset (kWrite
// at the end with O_APPEND).
enum class Op : uint16_t {
#define IORELAY_OP_ENUM(Name, code, name, Request, Reply, family, handler, tail) k##Name = code,
  IORELAY_PROTOCOL_OPS(IORELAY_OP_ENUM)
#undef IORELAY_OP_ENUM
};

inline bool IsKnownOp(uint16_t op) {
  switch (static_cast<Op>(op)) {
#define IORELAY_OP_CASE(Name, code, name, Request, Reply, family, handler, tail) case Op::k##Name:
    IORELAY_PROTOCOL_OPS(IORELAY_OP_CASE)
#undef IORELAY_OP_CASE
    return true;
  }
  return false;
}

const char* OpName(Op op);

// Messages with no fields (kPing, kStats, kHeartbeat requests; most replies).
struct Empty {
  template <class V>
  void Visit(V&) {}
};

struct HelloReply {
  Nonce server_nonce{};
  template <class V>
  void Visit(V& v) {
    v(server_nonce);
  }
};

// AuthRequest.seal_wanted's bits.
inline constexpr uint32_t kSealWanted = 1;
inline constexpr uint32_t kSealOffersAesGmac = 2;

struct AuthRequest {
  Nonce client_nonce{};
  Proof proof{};
  // Names the credential the proof is made with (common/key_id.h): the daemon checks the proof
  // against that credential alone.
  KeyId key_id{};
  uint32_t pid = 0;
  uint32_t node_id = 0;  // the client's (virtual) node id, for placement and statistics
  std::string host;
  uint64_t join_session = 0;  // 0: a new session; else join this one ...
  uint64_t join_token = 0;    // ... proving it with its token
  // Bit 0 (kSealWanted): the client requires tags on this connection if it crosses a network
  // (the default; 0 only with IORELAY_SEAL=off, to measure their cost against a daemon run with
  // --seal off). Bit 1 (kSealOffersAesGmac): the client can check AES-GMAC tags
  // (common/frame_mac.h); the daemon picks the algorithm in AuthReply.sealed. Both sides'
  // fields are in the handshake transcript, so a man in the middle cannot change the offer or
  // the choice (common/handshake_transcript.h).
  uint32_t seal_wanted = kSealWanted;
  template <class V>
  void Visit(V& v) {
    v(client_nonce);
    v(proof);
    v(key_id);
    v(pid);
    v(node_id);
    v(host);
    v(join_session);
    v(join_token);
    v(seal_wanted);
  }
};

struct AuthReply {
  uint64_t session = 0;
  uint64_t token = 0;         // secret to join or adopt from this session
  std::string app;            // the application name bound to the credential
  uint32_t heartbeat_ms = 0;  // heartbeat period while requests are outstanding
  uint32_t max_io_bytes = 0;  // largest read or write the daemon accepts in one request
  // Not 0: every later frame, both ways, carries a tag (common/frame_mac.h), 1 Poly1305, 2
  // AES-GMAC (TagAlgorithm; 2 only when the client offered it): the daemon seals its TCP
  // connections (unless run with --seal off and asked with seal_wanted 0); Unix sockets are
  // not sealed.
  uint32_t sealed = 0;
  // The daemon's MAC over the transcript up to this field (common/handshake_transcript.h).
  // Last, so that the bytes it covers are the payload before it.
  Proof daemon_proof{};
  template <class V>
  void Visit(V& v) {
    v(session);
    v(token);
    v(app);
    v(heartbeat_ms);
    v(max_io_bytes);
    v(sealed);
    v(daemon_proof);
  }
};

// kFinished: the client's MAC over the whole handshake transcript, daemon proof included
// (common/handshake_transcript.h). No reply; on a sealed connection it is the first tagged frame.
struct FinishedRequest {
  Proof mac{};
  template <class V>
  void Visit(V& v) {
    v(mac);
  }
};

// kPad: bytes the daemon skips, with no reply. Over shared memory the client sends one before
// a large write so that the write's data lands aligned in the ring (common/shm_ring.h).
struct PadRequest {
  std::string bytes;
  template <class V>
  void Visit(V& v) {
    v(bytes);
  }
};

// After auth, on a Unix socket: asks to move this connection's frames to shared memory
// (docs/daemon.md, Shared-memory transport). The client's network namespace and boot id: the
// daemon refuses unless both are its own. The reply (ShmReply) carries the memfd and the
// two eventfds as SCM_RIGHTS; an error reply leaves the connection on the socket.
struct ShmRequest {
  uint64_t netns_dev = 0;
  uint64_t netns_ino = 0;
  std::string boot_id;
  template <class V>
  void Visit(V& v) {
    v(netns_dev);
    v(netns_ino);
    v(boot_id);
  }
};

struct ShmReply {
  uint64_t ring_bytes = 0;  // each ring's size; the memfd holds ShmMappingBytes(ring_bytes)
  // 0: no pipes. Else the reply carries two more descriptors, the write end of a pipe to the
  // daemon and the read end of a pipe from it, and a piped request's data may span at most
  // this many pages (kPreadPiped, kPwritePiped).
  uint32_t pipe_pages = 0;
  template <class V>
  void Visit(V& v) {
    v(ring_bytes);
    v(pipe_pages);
  }
};

// After fork: the child's new session takes references to its parent's handles, so
// parent and child share file offsets as POSIX requires.
struct AdoptRequest {
  uint64_t parent_session = 0;
  uint64_t parent_token = 0;
  std::vector<uint64_t> handles;
  template <class V>
  void Visit(V& v) {
    v(parent_session);
    v(parent_token);
    v(handles);
  }
};

// Before fork, the parent announces the handles its child will adopt, so that no reply says
// `sole` in between (the child's kAdopt takes the announcement back).
struct ExpectAdoptRequest {
  std::vector<uint64_t> handles;
  template <class V>
  void Visit(V& v) {
    v(handles);
  }
};

struct OpenRequest {
  std::string path;
  int32_t flags = 0;  // Linux open(2) flags
  uint32_t mode = 0;
  template <class V>
  void Visit(V& v) {
    v(path);
    v(flags);
    v(mode);
  }
};

// struct stat on the wire: the reply to kStat and kFstat, and part of the open reply.
struct WireStat {
  uint64_t dev = 0, ino = 0, nlink = 0, rdev = 0, size = 0, blocks = 0;
  uint32_t mode = 0, uid = 0, gid = 0, blksize = 0;
  int64_t atime_sec = 0, mtime_sec = 0, ctime_sec = 0;
  uint32_t atime_nsec = 0, mtime_nsec = 0, ctime_nsec = 0;
  template <class V>
  void Visit(V& v) {
    v(dev);
    v(ino);
    v(nlink);
    v(rdev);
    v(size);
    v(blocks);
    v(mode);
    v(uid);
    v(gid);
    v(blksize);
    v(atime_sec);
    v(mtime_sec);
    v(ctime_sec);
    v(atime_nsec);
    v(mtime_nsec);
    v(ctime_nsec);
  }
};

struct OpenReply {
  uint64_t handle = 0;
  // The file's attributes just after the open: its identity (dev, ino: locks and per-file
  // scheduling), its type, and what answers the client's next fstat (docs/interposer.md).
  WireStat attrs;
  template <class V>
  void Visit(V& v) {
    v(handle);
    v(attrs);
  }
};

struct HandleRequest {  // kClose, kFstat, kFstatfs
  uint64_t handle = 0;
  template <class V>
  void Visit(V& v) {
    v(handle);
  }
};

struct PreadRequest {
  uint64_t handle = 0;
  uint64_t offset = 0;
  uint32_t length = 0;
  template <class V>
  void Visit(V& v) {
    v(handle);
    v(offset);
    v(length);
  }
};

struct PwriteRequest {  // [tail]
  uint64_t handle = 0;
  uint64_t offset = 0;
  template <class V>
  void Visit(V& v) {
    v(handle);
    v(offset);
  }
};

// kPwriteRanges [tail]: several positional writes of one file in one request (the client's
// write-behind, docs/interposer.md). The tail is a table of `ranges` entries, each two
// little-endian u64 (offset, length), then the ranges' bytes one after another in the table's
// order. The daemon writes them in that order, one backend call each, and stops at the first that
// fails or is short; the reply's CountReply counts the bytes written up to there (a failure of the
// first range is the reply's errno). At most kMaxWriteRanges entries.
struct RangesRequest {  // [tail]
  uint64_t handle = 0;
  uint64_t ranges = 0;
  template <class V>
  void Visit(V& v) {
    v(handle);
    v(ranges);
  }
};
inline constexpr uint64_t kMaxWriteRanges = 4096;
inline constexpr size_t kWriteRangeEntryBytes = 16;

// kPwritePiped (shared memory with pipes only) [tail]: a kPwrite whose first `length` bytes of
// data the client put in its pipe to the daemon (vmsplice: references to its pages, no copy)
// before it sent the frame, and whose other bytes, if any, follow as the tail (what did not fit
// the pipe); the daemon moves the piped bytes out as it reads the frame, and writes them to the
// file with splice(2). Its reply carries a CountReply, as kPwrite's does. kPreadPiped takes
// kPread's fields; its reply is PipedReadReply.
using PwritePipedRequest = PreadRequest;  // the same fields: handle, offset, length

// kPreadPiped's reply [tail]: the first `piped` bytes read are in the client's pipe from the
// daemon (spliced from the page cache, no copy), the rest follow as the tail; piped + the
// tail's length is the count read.
struct PipedReadReply {
  uint64_t piped = 0;
  template <class V>
  void Visit(V& v) {
    v(piped);
  }
};

struct ReadRequest {
  uint64_t handle = 0;
  uint32_t length = 0;
  template <class V>
  void Visit(V& v) {
    v(handle);
    v(length);
  }
};

struct WriteRequest {  // [tail]
  uint64_t handle = 0;
  template <class V>
  void Visit(V& v) {
    v(handle);
  }
};

struct CountReply {  // kPwrite, kWrite
  uint64_t count = 0;
  template <class V>
  void Visit(V& v) {
    v(count);
  }
};

struct LseekRequest {
  uint64_t handle = 0;
  int64_t offset = 0;
  int32_t whence = 0;  // SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE
  template <class V>
  void Visit(V& v) {
    v(handle);
    v(offset);
    v(whence);
  }
};

// Whose the offset of a description is, the rule client and daemon share: a client may keep it
// itself only for a regular file not opened O_APPEND, and, after the description was shared
// (fork), only once OffsetReply::sole says it no longer is; otherwise the daemon keeps it.
inline bool ClientMayKeepOffset(uint32_t mode, int flags) {
  return S_ISREG(mode) && (flags & O_APPEND) == 0;
}

struct OffsetReply {
  int64_t offset = 0;
  // 1 when no other session holds the description nor may still adopt it (kExpectAdopt): the
  // client may hold the offset again (the description is no longer shared after fork).
  uint32_t sole = 0;
  template <class V>
  void Visit(V& v) {
    v(offset);
    v(sole);
  }
};

struct FsyncRequest {
  uint64_t handle = 0;
  uint32_t datasync = 0;
  template <class V>
  void Visit(V& v) {
    v(handle);
    v(datasync);
  }
};

struct FtruncateRequest {
  uint64_t handle = 0;
  int64_t length = 0;
  template <class V>
  void Visit(V& v) {
    v(handle);
    v(length);
  }
};

// A file's access and modification times as utimensat(2) takes them: tv_nsec may be UTIME_NOW
// or UTIME_OMIT.
struct WireTimes {
  int64_t atime_sec = 0;
  int64_t atime_nsec = 0;
  int64_t mtime_sec = 0;
  int64_t mtime_nsec = 0;
  template <class V>
  void Visit(V& v) {
    v(atime_sec);
    v(atime_nsec);
    v(mtime_sec);
    v(mtime_nsec);
  }
};

struct FchmodRequest {
  uint64_t handle = 0;
  uint32_t mode = 0;  // as ChmodRequest
  template <class V>
  void Visit(V& v) {
    v(handle);
    v(mode);
  }
};

struct FutimensRequest {
  uint64_t handle = 0;
  WireTimes times;
  template <class V>
  void Visit(V& v) {
    v(handle);
    v(times);
  }
};

struct FallocateRequest {
  uint64_t handle = 0;
  int32_t mode = 0;
  int64_t offset = 0;
  int64_t length = 0;
  template <class V>
  void Visit(V& v) {
    v(handle);
    v(mode);
    v(offset);
    v(length);
  }
};

struct SetflRequest {  // F_SETFL: O_APPEND, O_NONBLOCK, O_DIRECT, O_NOATIME change
  uint64_t handle = 0;
  int32_t flags = 0;
  template <class V>
  void Visit(V& v) {
    v(handle);
    v(flags);
  }
};

struct WireStatfs {
  uint64_t type = 0, bsize = 0, blocks = 0, bfree = 0, bavail = 0, files = 0, ffree = 0;
  uint64_t namelen = 0, frsize = 0, flags = 0;
  template <class V>
  void Visit(V& v) {
    v(type);
    v(bsize);
    v(blocks);
    v(bfree);
    v(bavail);
    v(files);
    v(ffree);
    v(namelen);
    v(frsize);
    v(flags);
  }
};

struct PathRequest {  // kStatfs, kUnlink, kRmdir, kReadlink
  std::string path;
  template <class V>
  void Visit(V& v) {
    v(path);
  }
};

struct StatRequest {
  std::string path;
  uint32_t nofollow = 0;  // lstat
  template <class V>
  void Visit(V& v) {
    v(path);
    v(nofollow);
  }
};

struct AccessRequest {
  std::string path;
  int32_t mode = 0;  // F_OK, R_OK, W_OK, X_OK
  template <class V>
  void Visit(V& v) {
    v(path);
    v(mode);
  }
};

struct MkdirRequest {
  std::string path;
  uint32_t mode = 0;
  template <class V>
  void Visit(V& v) {
    v(path);
    v(mode);
  }
};

struct RenameRequest {
  std::string from;
  std::string to;
  uint32_t flags = 0;  // renameat2 flags
  template <class V>
  void Visit(V& v) {
    v(from);
    v(to);
    v(flags);
  }
};

struct TruncateRequest {
  std::string path;
  int64_t length = 0;
  template <class V>
  void Visit(V& v) {
    v(path);
    v(length);
  }
};

struct ChmodRequest {
  std::string path;
  uint32_t mode = 0;  // permission bits; the daemon drops set-user-ID and set-group-ID
  template <class V>
  void Visit(V& v) {
    v(path);
    v(mode);
  }
};

struct UtimensRequest {
  std::string path;
  WireTimes times;
  uint32_t nofollow = 0;  // the link itself (AT_SYMLINK_NOFOLLOW)
  template <class V>
  void Visit(V& v) {
    v(path);
    v(times);
    v(nofollow);
  }
};

struct SymlinkRequest {
  std::string target;  // stored as given; the daemon never follows it out of the export
  std::string path;    // the link to create
  template <class V>
  void Visit(V& v) {
    v(target);
    v(path);
  }
};

struct LinkRequest {
  std::string from;
  std::string to;
  uint32_t follow = 0;  // link the file a final symbolic link names (AT_SYMLINK_FOLLOW)
  template <class V>
  void Visit(V& v) {
    v(from);
    v(to);
    v(follow);
  }
};

struct DirEntry {
  uint64_t ino = 0;
  uint8_t type = 0;  // DT_*
  std::string name;
  // The entry's own attributes (lstat: a symbolic link's, not its target's), read as the page
  // was listed, so that a walk (find, du, ls -l) stats from the listing (docs/interposer.md);
  // has_attrs 0 where the backend could not say.
  uint32_t has_attrs = 0;
  WireStat attrs;
  template <class V>
  void Visit(V& v) {
    v(ino);
    v(type);
    v(name);
    v(has_attrs);
    v(attrs);
  }
};

// One page of a listing ("." and ".." included), from `cookie` (0: the start). The daemon
// bounds a page (kReaddirPageEntries); the client asks for the next with next_cookie until done.
struct ReaddirRequest {
  std::string path;
  uint64_t cookie = 0;
  template <class V>
  void Visit(V& v) {
    v(path);
    v(cookie);
  }
};

struct ReaddirReply {
  std::vector<DirEntry> entries;
  uint64_t next_cookie = 0;
  uint32_t done = 0;  // 1: no entry after these
  template <class V>
  void Visit(V& v) {
    v(entries);
    v(next_cookie);
    v(done);
  }
};

// Record locks, owned by the session (process). The client sends them to the daemon
// that owns the file's locks (one per file), naming the file by identity, with the
// range already made absolute (l_whence = SEEK_SET).
struct LockRequest {
  uint64_t dev = 0;
  uint64_t ino = 0;
  int32_t cmd = 0;   // F_GETLK, F_SETLK, F_SETLKW
  int16_t type = 0;  // F_RDLCK, F_WRLCK, F_UNLCK
  int64_t start = 0;
  int64_t length = 0;  // 0: to the end of file, however it grows
  int32_t pid = 0;     // reported to F_GETLK callers of other processes
  template <class V>
  void Visit(V& v) {
    v(dev);
    v(ino);
    v(cmd);
    v(type);
    v(start);
    v(length);
    v(pid);
  }
};

struct LockReply {  // F_GETLK: the conflicting lock, or type F_UNLCK
  int16_t type = 0;
  int64_t start = 0;
  int64_t length = 0;
  int32_t pid = 0;
  template <class V>
  void Visit(V& v) {
    v(type);
    v(start);
    v(length);
    v(pid);
  }
};

// POSIX release-on-close: closing any descriptor of a file drops the process's locks.
struct UnlockAllRequest {
  uint64_t dev = 0;
  uint64_t ino = 0;
  template <class V>
  void Visit(V& v) {
    v(dev);
    v(ino);
  }
};

// The admin ops (docs/security.md, "The admin channel"), accepted only on a connection
// authenticated with the daemon's admin credential.

// kAdmit: a job, its credential and the directories it may reach.
struct AdmitRequest {
  std::string job;  // its name: the application in the statistics and in kJobs
  Nonce wrap_nonce{};
  Secret wrapped_secret{};         // WrapSecret(admin, wrap_nonce, the job's secret)
  std::vector<std::string> roots;  // "PREFIX=DIR": client prefix, directory on this node
  uint32_t weight = 1;             // the scheduler's weight for the job
  uint64_t lease_ms = 0;           // revoked unless renewed within this; 0: no lease
  // The job's shares of the daemon's resources; 0: the daemon's default (docs/security.md).
  uint32_t max_open_files = 0;
  uint32_t max_locks = 0;  // lock ranges its sessions hold together (ENOLCK beyond)
  uint32_t max_connections = 0;
  uint64_t max_inflight_bytes = 0;
  template <class V>
  void Visit(V& v) {
    v(job);
    v(wrap_nonce);
    v(wrapped_secret);
    v(roots);
    v(weight);
    v(lease_ms);
    v(max_open_files);
    v(max_locks);
    v(max_connections);
    v(max_inflight_bytes);
  }
};

struct AdmitReply {
  uint32_t app = 0;  // the job's application id (never reused by this daemon)
  template <class V>
  void Visit(V& v) {
    v(app);
  }
};

// kRevoke, kRelease: a job by name.
struct JobRequest {
  std::string job;
  template <class V>
  void Visit(V& v) {
    v(job);
  }
};

// kRenew: the job's lease runs `lease_ms` from now (0: its length at admission). On the admin
// channel, any job's; on a job's own connection, its own only (`job` empty or its name): what
// `iorelay run` sends as the job's heartbeat.
struct RenewRequest {
  std::string job;
  uint64_t lease_ms = 0;
  template <class V>
  void Visit(V& v) {
    v(job);
    v(lease_ms);
  }
};

struct RenewReply {
  uint64_t lease_ms = 0;  // the lease's length now, so that a heartbeat knows its period
  template <class V>
  void Visit(V& v) {
    v(lease_ms);
  }
};

// What the table says of an op besides its code.
enum class Family : uint8_t { kRead, kWrite, kMetadata, kLock };  // the daemon's counters
enum class Handler : uint8_t { kSession, kData, kPath, kFile, kLock, kAdmin };
struct OpInfo {
  const char* name;
  Family family;
  Handler handler;
  bool tail;             // bulk data follows the request's fields
  uint32_t max_fields;   // the request's largest encoding (strings and lists at their limits)
  uint32_t max_payload;  // max_fields, plus kMaxIoBytes with a tail
};
// The row of a known op (IsKnownOp).
const OpInfo& Info(Op op);

}  // namespace iorelay::proto
