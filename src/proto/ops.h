// The protocol's ops, one row each: everything else about an op (the enum, its name, whether a
// frame's op is known, the largest request it may carry, its statistics family, and which daemon
// handler serves it, with which types) is generated from this table. Adding an op is a row here,
// its messages in messages.h, its handler and its client call (docs/architecture.md shows one).
//
// X(Name, code, "name", Request, Reply, Family, Handler, Tail)
//   Request: the request message (messages.h); its largest encoding bounds the payload.
//   Reply:   the reply message (its fields; Empty when the reply has none, or there is no reply).
//   Family:  kRead, kWrite, kLock or kMetadata: the daemon's counters.
//   Handler: kSession (hello, auth, finished, heartbeat, pad, shm_attach: the connection itself)
//            and kData (the scheduler) are served by the daemon's own code; a kFile, kPath or
//            kLock row is served by the function Handle<Name> of src/daemon/*_ops.cc, which the
//            daemon declares and binds from the row with its Request and Reply types
//            (src/daemon/op_handlers.h), so that the compiler checks it against the row.
//            kAdmin rows are served likewise (src/daemon/admin_ops.cc), and only on a
//            connection authenticated with the admin credential (others get EACCES).
//   Tail:    true when bulk data follows the fields (at most kMaxIoBytes).
#pragma once

#define IORELAY_PROTOCOL_OPS(X)                                                           \
  X(Hello, 1, "hello", Empty, HelloReply, kMetadata, kSession, false)                     \
  X(Auth, 2, "auth", AuthRequest, AuthReply, kMetadata, kSession, false)                  \
  X(Heartbeat, 3, "heartbeat", Empty, Empty, kMetadata, kSession, false)                  \
  X(Ping, 4, "ping", Empty, Empty, kMetadata, kFile, false)                               \
  X(Stats, 5, "stats", Empty, Empty, kMetadata, kFile, false)                             \
  X(Adopt, 6, "adopt", AdoptRequest, Empty, kMetadata, kFile, false)                      \
  X(ShmAttach, 7, "shm_attach", ShmRequest, ShmReply, kMetadata, kSession, false)         \
  X(ExpectAdopt, 8, "expect_adopt", ExpectAdoptRequest, Empty, kMetadata, kFile, false)   \
  X(Pad, 9, "pad", PadRequest, Empty, kMetadata, kSession, false)                         \
  X(Finished, 27, "finished", FinishedRequest, Empty, kMetadata, kSession, false)         \
  X(Open, 10, "open", OpenRequest, OpenReply, kMetadata, kFile, false)                    \
  X(Close, 11, "close", HandleRequest, Empty, kMetadata, kFile, false)                    \
  X(Pread, 12, "pread", PreadRequest, Empty, kRead, kData, false)                         \
  X(Pwrite, 13, "pwrite", PwriteRequest, CountReply, kWrite, kData, true)                 \
  X(Read, 14, "read", ReadRequest, Empty, kRead, kData, false)                            \
  X(Write, 15, "write", WriteRequest, CountReply, kWrite, kData, true)                    \
  X(Lseek, 16, "lseek", LseekRequest, OffsetReply, kMetadata, kFile, false)               \
  X(Fsync, 17, "fsync", FsyncRequest, Empty, kMetadata, kFile, false)                     \
  X(Ftruncate, 18, "ftruncate", FtruncateRequest, Empty, kMetadata, kFile, false)         \
  X(Fallocate, 19, "fallocate", FallocateRequest, Empty, kMetadata, kFile, false)         \
  X(Fstat, 20, "fstat", HandleRequest, WireStat, kMetadata, kFile, false)                 \
  X(Fstatfs, 21, "fstatfs", HandleRequest, WireStatfs, kMetadata, kFile, false)           \
  X(Setfl, 22, "setfl", SetflRequest, Empty, kMetadata, kFile, false)                     \
  X(PreadPiped, 23, "pread_piped", PreadRequest, PipedReadReply, kRead, kData, false)     \
  X(PwritePiped, 24, "pwrite_piped", PwritePipedRequest, CountReply, kWrite, kData, true) \
  X(PwriteRanges, 28, "pwrite_ranges", RangesRequest, CountReply, kWrite, kData, true)    \
  X(Fchmod, 25, "fchmod", FchmodRequest, Empty, kMetadata, kFile, false)                  \
  X(Futimens, 26, "futimens", FutimensRequest, Empty, kMetadata, kFile, false)            \
  X(Stat, 30, "stat", StatRequest, WireStat, kMetadata, kPath, false)                     \
  X(Statfs, 31, "statfs", PathRequest, WireStatfs, kMetadata, kPath, false)               \
  X(Access, 32, "access", AccessRequest, Empty, kMetadata, kPath, false)                  \
  X(Unlink, 33, "unlink", PathRequest, Empty, kMetadata, kPath, false)                    \
  X(Mkdir, 34, "mkdir", MkdirRequest, Empty, kMetadata, kPath, false)                     \
  X(Rmdir, 35, "rmdir", PathRequest, Empty, kMetadata, kPath, false)                      \
  X(Rename, 36, "rename", RenameRequest, Empty, kMetadata, kPath, false)                  \
  X(Truncate, 37, "truncate", TruncateRequest, Empty, kMetadata, kPath, false)            \
  X(Readlink, 38, "readlink", PathRequest, Empty, kMetadata, kPath, false)                \
  X(Readdir, 39, "readdir", ReaddirRequest, ReaddirReply, kMetadata, kPath, false)        \
  X(Chmod, 40, "chmod", ChmodRequest, Empty, kMetadata, kPath, false)                     \
  X(Utimens, 41, "utimens", UtimensRequest, Empty, kMetadata, kPath, false)               \
  X(Symlink, 42, "symlink", SymlinkRequest, Empty, kMetadata, kPath, false)               \
  X(Link, 43, "link", LinkRequest, Empty, kMetadata, kPath, false)                        \
  X(Lock, 50, "lock", LockRequest, LockReply, kLock, kLock, false)                        \
  X(UnlockAll, 51, "unlock_all", UnlockAllRequest, Empty, kLock, kLock, false)            \
  X(Admit, 55, "admit", AdmitRequest, AdmitReply, kMetadata, kAdmin, false)               \
  X(Revoke, 56, "revoke", JobRequest, Empty, kMetadata, kAdmin, false)                    \
  X(Renew, 57, "renew", RenewRequest, RenewReply, kMetadata, kFile, false)                \
  X(Release, 58, "release", JobRequest, Empty, kMetadata, kAdmin, false)                  \
  X(Jobs, 59, "jobs", Empty, Empty, kMetadata, kAdmin, false)
