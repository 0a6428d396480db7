// The protocol's ops, one row each: everything else about an op (the enum, its name, whether a
// frame's op is known, the largest request it may carry, its statistics family, and which daemon
// handler serves it) is generated from this table. Adding an op is a row here, its messages in
// messages.h, its handler and its client call (docs/architecture.md shows one).
//
// X(Name, code, "name", Request, Family, Handler, Tail)
//   Request: the request message (messages.h); its largest encoding bounds the payload.
//   Family:  kRead, kWrite, kLock or kMetadata: the daemon's counters.
//   Handler: kSession (hello, auth, finished, heartbeat, pad: the connection itself), kData (the
//   scheduler),
//            kPath, kFile or kLock (src/daemon/*_ops.cc).
//   Tail:    true when bulk data follows the fields (at most kMaxIoBytes).
#pragma once

#define IORELAY_PROTOCOL_OPS(X)                                                  \
  X(Hello, 1, "hello", Empty, kMetadata, kSession, false)                        \
  X(Auth, 2, "auth", AuthRequest, kMetadata, kSession, false)                    \
  X(Heartbeat, 3, "heartbeat", Empty, kMetadata, kSession, false)                \
  X(Ping, 4, "ping", Empty, kMetadata, kFile, false)                             \
  X(Stats, 5, "stats", Empty, kMetadata, kFile, false)                           \
  X(Adopt, 6, "adopt", AdoptRequest, kMetadata, kFile, false)                    \
  X(ShmAttach, 7, "shm_attach", ShmRequest, kMetadata, kSession, false)          \
  X(ExpectAdopt, 8, "expect_adopt", ExpectAdoptRequest, kMetadata, kFile, false) \
  X(Pad, 9, "pad", PadRequest, kMetadata, kSession, false)                       \
  X(Finished, 27, "finished", FinishedRequest, kMetadata, kSession, false)       \
  X(Open, 10, "open", OpenRequest, kMetadata, kFile, false)                      \
  X(Close, 11, "close", HandleRequest, kMetadata, kFile, false)                  \
  X(Pread, 12, "pread", PreadRequest, kRead, kData, false)                       \
  X(Pwrite, 13, "pwrite", PwriteRequest, kWrite, kData, true)                    \
  X(Read, 14, "read", ReadRequest, kRead, kData, false)                          \
  X(Write, 15, "write", WriteRequest, kWrite, kData, true)                       \
  X(Lseek, 16, "lseek", LseekRequest, kMetadata, kFile, false)                   \
  X(Fsync, 17, "fsync", FsyncRequest, kMetadata, kFile, false)                   \
  X(Ftruncate, 18, "ftruncate", FtruncateRequest, kMetadata, kFile, false)       \
  X(Fallocate, 19, "fallocate", FallocateRequest, kMetadata, kFile, false)       \
  X(Fstat, 20, "fstat", HandleRequest, kMetadata, kFile, false)                  \
  X(Fstatfs, 21, "fstatfs", HandleRequest, kMetadata, kFile, false)              \
  X(Setfl, 22, "setfl", SetflRequest, kMetadata, kFile, false)                   \
  X(PreadPiped, 23, "pread_piped", PreadRequest, kRead, kData, false)            \
  X(PwritePiped, 24, "pwrite_piped", PwritePipedRequest, kWrite, kData, true)    \
  X(Fchmod, 25, "fchmod", FchmodRequest, kMetadata, kFile, false)                \
  X(Futimens, 26, "futimens", FutimensRequest, kMetadata, kFile, false)          \
  X(Stat, 30, "stat", StatRequest, kMetadata, kPath, false)                      \
  X(Statfs, 31, "statfs", PathRequest, kMetadata, kPath, false)                  \
  X(Access, 32, "access", AccessRequest, kMetadata, kPath, false)                \
  X(Unlink, 33, "unlink", PathRequest, kMetadata, kPath, false)                  \
  X(Mkdir, 34, "mkdir", MkdirRequest, kMetadata, kPath, false)                   \
  X(Rmdir, 35, "rmdir", PathRequest, kMetadata, kPath, false)                    \
  X(Rename, 36, "rename", RenameRequest, kMetadata, kPath, false)                \
  X(Truncate, 37, "truncate", TruncateRequest, kMetadata, kPath, false)          \
  X(Readlink, 38, "readlink", PathRequest, kMetadata, kPath, false)              \
  X(Readdir, 39, "readdir", ReaddirRequest, kMetadata, kPath, false)             \
  X(Chmod, 40, "chmod", ChmodRequest, kMetadata, kPath, false)                   \
  X(Utimens, 41, "utimens", UtimensRequest, kMetadata, kPath, false)             \
  X(Symlink, 42, "symlink", SymlinkRequest, kMetadata, kPath, false)             \
  X(Link, 43, "link", LinkRequest, kMetadata, kPath, false)                      \
  X(Lock, 50, "lock", LockRequest, kLock, kLock, false)                          \
  X(UnlockAll, 51, "unlock_all", UnlockAllRequest, kLock, kLock, false)
