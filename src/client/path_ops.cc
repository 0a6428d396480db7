// The path-based C API: each call goes to the daemon that serves the path (directly to the
// real file system when that daemon is lost and IORELAY_FALLBACK=direct).
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "client/file_ops.h"
#include "proto/stat_convert.h"

namespace proto = iorelay::proto;
using iorelay::Result;
using iorelay::client::Client;
using iorelay::client::StatusOnly;
using iorelay::client::Sys;

namespace {

// A path call that may change a file's attributes (its size, mode, links or ctime; a
// directory's entries): what an open's or a listing's attributes said may no longer hold.
void NoteAttributeChange(iorelay_client* c) {
  if (c) c->impl->NoteChange();
}

template <class Remote, class Direct>
long PathOp(iorelay_client* c, const char* path, Remote remote, Direct direct) {
  if (!c || !path) return -EFAULT;
  if (path[0] != '/') return -EINVAL;
  Client* cl = c->impl.get();
  cl->FlushIfBuffered();  // this process's writes come before its path calls
  cl->RefreshMap(false);
  int server = cl->ServerFor(path);
  Result<long> r = remote(cl, server);
  // Failover: repeated on the survivor (a rename or unlink the dead daemon carried out then
  // reports ENOENT there).
  for (int next; !r.ok() && (next = cl->ReplaceDead(server)) >= 0;) {
    server = next;
    r = remote(cl, server);
  }
  if (r.ok()) return *r;
  if (r.status().code() == EIO && cl->config().fallback == iorelay::client::Fallback::kDirect) {
    return direct(iorelay::client::DirectPath(cl->config(), path));
  }
  return -r.status().code();
}

// Stat prefetch: lists the directory of `path` to its end, which records its entries'
// attributes (dir_ops.cc). 0 or -errno.
int ListParent(iorelay_client* c, const char* path) {
  std::string dir(path);
  dir.erase(std::max<size_t>(dir.rfind('/'), 1));
  iorelay_dir* d = nullptr;
  if (int rc = iorelay_opendir(c, dir.c_str(), &d); rc < 0) return rc;
  const iorelay_dirent* entry = nullptr;
  int rc = 0;
  while ((rc = iorelay_readdir_next(d, &entry)) > 0) {
  }
  iorelay_closedir(d);
  return rc;
}

}  // namespace

extern "C" {

int iorelay_stat(iorelay_client* c, const char* path, struct stat* st, int nofollow) {
  if (!st) return -EFAULT;
  if (c && path) {
    Client* cl = c->impl.get();
    cl->FlushIfBuffered();  // a stat shows this process's writes
    if (std::optional<proto::WireStat> w = cl->listed_attrs().Get(
            path, nofollow != 0, iorelay::client::MonotonicNs(), cl->changes())) {
      iorelay::proto::ToStat(*w, st);
      return 0;
    }
    if (cl->config().stat_prefetch &&
        cl->listed_attrs().NoteMiss(path, iorelay::client::MonotonicNs()) &&
        ListParent(c, path) == 0) {
      if (std::optional<proto::WireStat> w = cl->listed_attrs().Get(
              path, nofollow != 0, iorelay::client::MonotonicNs(), cl->changes())) {
        iorelay::proto::ToStat(*w, st);
        return 0;
      }
    }
  }
  return static_cast<int>(PathOp(
      c, path,
      [&](Client* cl, int s) -> Result<long> {
        proto::WireStat w;
        iorelay::client::Outcome r =
            cl->CallMsg(s, proto::Op::kStat, proto::StatRequest{path, nofollow ? 1u : 0u}, &w);
        if (r.ok()) proto::ToStat(w, st);
        return StatusOnly(r);
      },
      [&](const std::string& p) {
        return Sys(
            syscall(SYS_newfstatat, AT_FDCWD, p.c_str(), st, nofollow ? AT_SYMLINK_NOFOLLOW : 0));
      }));
}

int iorelay_statfs(iorelay_client* c, const char* path, struct statfs* st) {
  if (!st) return -EFAULT;
  return static_cast<int>(PathOp(
      c, path,
      [&](Client* cl, int s) -> Result<long> {
        proto::WireStatfs w;
        iorelay::client::Outcome r =
            cl->CallMsg(s, proto::Op::kStatfs, proto::PathRequest{path}, &w);
        if (r.ok()) proto::ToStatfs(w, st);
        return StatusOnly(r);
      },
      [&](const std::string& p) { return Sys(syscall(SYS_statfs, p.c_str(), st)); }));
}

int iorelay_access(iorelay_client* c, const char* path, int mode) {
  return static_cast<int>(PathOp(
      c, path,
      [&](Client* cl, int s) {
        return StatusOnly(cl->CallMsg<proto::AccessRequest, proto::Empty>(
            s, proto::Op::kAccess, proto::AccessRequest{path, mode}, nullptr));
      },
      [&](const std::string& p) {
        return Sys(syscall(SYS_faccessat, AT_FDCWD, p.c_str(), mode, 0));
      }));
}

int iorelay_unlink(iorelay_client* c, const char* path) {
  NoteAttributeChange(c);
  return static_cast<int>(PathOp(
      c, path,
      [&](Client* cl, int s) {
        return StatusOnly(cl->CallMsg<proto::PathRequest, proto::Empty>(
            s, proto::Op::kUnlink, proto::PathRequest{path}, nullptr));
      },
      [&](const std::string& p) { return Sys(syscall(SYS_unlinkat, AT_FDCWD, p.c_str(), 0)); }));
}

int iorelay_mkdir(iorelay_client* c, const char* path, mode_t mode) {
  NoteAttributeChange(c);  // the parent's
  return static_cast<int>(PathOp(
      c, path,
      [&](Client* cl, int s) {
        return StatusOnly(cl->CallMsg<proto::MkdirRequest, proto::Empty>(
            s, proto::Op::kMkdir, proto::MkdirRequest{path, static_cast<uint32_t>(mode)}, nullptr));
      },
      [&](const std::string& p) { return Sys(syscall(SYS_mkdirat, AT_FDCWD, p.c_str(), mode)); }));
}

int iorelay_chmod(iorelay_client* c, const char* path, mode_t mode) {
  NoteAttributeChange(c);
  return static_cast<int>(PathOp(
      c, path,
      [&](Client* cl, int s) {
        return StatusOnly(cl->CallMsg<proto::ChmodRequest, proto::Empty>(
            s, proto::Op::kChmod, proto::ChmodRequest{path, static_cast<uint32_t>(mode)}, nullptr));
      },
      [&](const std::string& p) { return Sys(syscall(SYS_fchmodat, AT_FDCWD, p.c_str(), mode)); }));
}

int iorelay_utimens(iorelay_client* c, const char* path, const struct timespec times[2],
                    int nofollow) {
  NoteAttributeChange(c);
  const proto::WireTimes wire = proto::ToWireTimes(times);
  return static_cast<int>(PathOp(
      c, path,
      [&](Client* cl, int s) {
        return StatusOnly(cl->CallMsg<proto::UtimensRequest, proto::Empty>(
            s, proto::Op::kUtimens, proto::UtimensRequest{path, wire, nofollow ? 1u : 0u},
            nullptr));
      },
      [&](const std::string& p) {
        return Sys(
            syscall(SYS_utimensat, AT_FDCWD, p.c_str(), times, nofollow ? AT_SYMLINK_NOFOLLOW : 0));
      }));
}

int iorelay_symlink(iorelay_client* c, const char* target, const char* path) {
  if (!target) return -EFAULT;
  NoteAttributeChange(c);  // the parent's
  return static_cast<int>(PathOp(
      c, path,
      [&](Client* cl, int s) {
        return StatusOnly(cl->CallMsg<proto::SymlinkRequest, proto::Empty>(
            s, proto::Op::kSymlink, proto::SymlinkRequest{target, path}, nullptr));
      },
      [&](const std::string& p) {
        return Sys(syscall(SYS_symlinkat, target, AT_FDCWD, p.c_str()));
      }));
}

int iorelay_link(iorelay_client* c, const char* from, const char* to, int follow) {
  if (!to) return -EFAULT;
  NoteAttributeChange(c);  // the link count
  return static_cast<int>(PathOp(
      c, from,
      [&](Client* cl, int s) {
        return StatusOnly(cl->CallMsg<proto::LinkRequest, proto::Empty>(
            s, proto::Op::kLink, proto::LinkRequest{from, to, follow ? 1u : 0u}, nullptr));
      },
      [&](const std::string& p) {
        std::string q = iorelay::client::DirectPath(c->impl->config(), to);
        return Sys(syscall(SYS_linkat, AT_FDCWD, p.c_str(), AT_FDCWD, q.c_str(),
                           follow ? AT_SYMLINK_FOLLOW : 0));
      }));
}

int iorelay_rmdir(iorelay_client* c, const char* path) {
  NoteAttributeChange(c);
  return static_cast<int>(PathOp(
      c, path,
      [&](Client* cl, int s) {
        return StatusOnly(cl->CallMsg<proto::PathRequest, proto::Empty>(
            s, proto::Op::kRmdir, proto::PathRequest{path}, nullptr));
      },
      [&](const std::string& p) {
        return Sys(syscall(SYS_unlinkat, AT_FDCWD, p.c_str(), AT_REMOVEDIR));
      }));
}

int iorelay_rename(iorelay_client* c, const char* from, const char* to, unsigned flags) {
  if (!to) return -EFAULT;
  NoteAttributeChange(c);
  return static_cast<int>(PathOp(
      c, from,
      [&](Client* cl, int s) {
        return StatusOnly(cl->CallMsg<proto::RenameRequest, proto::Empty>(
            s, proto::Op::kRename, proto::RenameRequest{from, to, flags}, nullptr));
      },
      [&](const std::string& p) {
        std::string q = iorelay::client::DirectPath(c->impl->config(), to);
        return Sys(syscall(SYS_renameat2, AT_FDCWD, p.c_str(), AT_FDCWD, q.c_str(), flags));
      }));
}

int iorelay_truncate(iorelay_client* c, const char* path, off_t length) {
  NoteAttributeChange(c);
  return static_cast<int>(PathOp(
      c, path,
      [&](Client* cl, int s) {
        return StatusOnly(cl->CallMsg<proto::TruncateRequest, proto::Empty>(
            s, proto::Op::kTruncate, proto::TruncateRequest{path, length}, nullptr));
      },
      [&](const std::string& p) { return Sys(syscall(SYS_truncate, p.c_str(), length)); }));
}

ssize_t iorelay_readlink(iorelay_client* c, const char* path, char* buf, size_t size) {
  if (!buf) return -EFAULT;
  if (size == 0) return -EINVAL;
  return PathOp(
      c, path,
      [&](Client* cl, int s) -> Result<long> {
        if (!proto::StringsFit(proto::PathRequest{path})) {
          return -ENAMETOOLONG;
        }
        const std::vector<uint8_t> fields = proto::EncodeFields(proto::PathRequest{path});
        iorelay::client::CallReply reply;
        iorelay::client::Outcome r =
            cl->Call(s, {.op = proto::Op::kReadlink, .fields = fields}, &reply);
        if (!r.ok()) return StatusOnly(r);
        size_t n = std::min(size, reply.payload.size());  // truncated silently, as readlink(2)
        std::memcpy(buf, reply.payload.data(), n);
        return static_cast<long>(n);
      },
      [&](const std::string& p) {
        return Sys(syscall(SYS_readlinkat, AT_FDCWD, p.c_str(), buf, size));
      });
}

}  // extern "C"
