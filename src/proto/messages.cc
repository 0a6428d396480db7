// Names of ops, for traces, statistics and error messages.
#include "proto/messages.h"

namespace iorelay::proto {

const char* OpName(Op op) {
  switch (op) {
    case Op::kHello:
      return "hello";
    case Op::kAuth:
      return "auth";
    case Op::kHeartbeat:
      return "heartbeat";
    case Op::kPing:
      return "ping";
    case Op::kStats:
      return "stats";
    case Op::kAdopt:
      return "adopt";
    case Op::kOpen:
      return "open";
    case Op::kClose:
      return "close";
    case Op::kPread:
      return "pread";
    case Op::kPwrite:
      return "pwrite";
    case Op::kRead:
      return "read";
    case Op::kWrite:
      return "write";
    case Op::kLseek:
      return "lseek";
    case Op::kFsync:
      return "fsync";
    case Op::kFtruncate:
      return "ftruncate";
    case Op::kFallocate:
      return "fallocate";
    case Op::kFstat:
      return "fstat";
    case Op::kFstatfs:
      return "fstatfs";
    case Op::kSetfl:
      return "setfl";
    case Op::kStat:
      return "stat";
    case Op::kStatfs:
      return "statfs";
    case Op::kAccess:
      return "access";
    case Op::kUnlink:
      return "unlink";
    case Op::kMkdir:
      return "mkdir";
    case Op::kRmdir:
      return "rmdir";
    case Op::kRename:
      return "rename";
    case Op::kTruncate:
      return "truncate";
    case Op::kReadlink:
      return "readlink";
    case Op::kReaddir:
      return "readdir";
    case Op::kLock:
      return "lock";
    case Op::kUnlockAll:
      return "unlock_all";
  }
  return "unknown";
}

}  // namespace iorelay::proto
