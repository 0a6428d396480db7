// Export (before exec) and re-open (in the new image) of forwarded descriptors, and the
// forwarded working directory handed down; see docs/interposer.md, "exec".
#include "preload/exec_env.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <new>

#include "preload/cwd.h"
#include "preload/fd_inherit.h"
#include "preload/state.h"
#include "preload/std_streams.h"

namespace iorelay::preload {
namespace {

constexpr int kChangeableFlags = O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME;

std::vector<InheritedFd> Inheritable() {
  std::vector<InheritedFd> out;
  for (int fd : g_table.ListInRange(0, ~0U)) {
    FdTable::Ref e = g_table.Acquire(fd);
    if (!e || e->cloexec.load(std::memory_order_relaxed)) continue;
    InheritedFd d;
    d.fd = fd;
    d.path = e->path;
    d.flags = e->open_flags & ~O_CLOEXEC;
    d.is_file = e->file != nullptr;
    if (d.is_file) {
      off_t off = iorelay_lseek(e->file, 0, SEEK_CUR);
      d.offset = off > 0 ? off : 0;
      int fl = iorelay_getfl(e->file);  // F_SETFL may have changed O_APPEND...
      if (fl >= 0) d.flags = (d.flags & ~kChangeableFlags) | (fl & kChangeableFlags);
    }
    out.push_back(std::move(d));
  }
  return out;
}

void Warn(const InheritedFd& d, int err) {
  char msg[512];
  int n = snprintf(msg, sizeof msg, "iorelay_preload: cannot re-open inherited fd %d (%s): %s\n",
                   d.fd, d.path.c_str(), strerror(err));
  if (n > 0) syscall(SYS_write, 2, msg, static_cast<size_t>(n));
}

// The descriptor is still the old image's placeholder (not closed, not reused).
bool IsPlaceholder(int fd) {
  long fl = syscall(SYS_fcntl, fd, F_GETFL);
  return fl >= 0 && (fl & O_PATH) != 0;
}

void Restore(const InheritedFd& d) {
  if (!IsPlaceholder(d.fd) || static_cast<size_t>(d.fd) >= g_table.capacity()) return;
  auto* e = new (std::nothrow) FdEntry;
  if (e == nullptr) return;
  e->path = d.path;
  e->open_flags = d.flags;
  if (d.is_file) {
    // The old image's session is gone with its connections: a new description, by
    // path, never re-creating or truncating the file.
    int flags = d.flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC);
    int rc = iorelay_open(g_client, d.path.c_str(), flags, 0, &e->file);
    if (rc == 0 && !(flags & O_APPEND) && d.offset > 0) {
      off_t off = iorelay_lseek(e->file, d.offset, SEEK_SET);
      rc = off < 0 ? static_cast<int>(off) : 0;
    }
    if (rc < 0) {
      if (e->file != nullptr) iorelay_close(e->file);
      delete e;
      Warn(d, -rc);  // the placeholder stays: I/O on it fails with EBADF
      return;
    }
  }
  g_table.Release(g_table.Install(d.fd, e));
  if (d.fd <= 2) AdoptStdStream(d.fd);  // `cmd > /fwd/job/log`: cmd's stdout
}

bool IsVariable(const char* entry, const char* name) {
  const size_t n = strlen(name);
  return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

// The variables this file hands to the next image (a stale one is replaced or dropped).
bool IsOurs(const char* entry) {
  return IsVariable(entry, kInheritEnv) || IsVariable(entry, kCwdEnv);
}

}  // namespace

ExecEnv::ExecEnv(char* const envp[]) : envp_(envp) {
  if (g_client == nullptr) return;
  // The new program has no buffers of this one: write-behind's unsent writes go out now (a
  // failure is written to stderr, since no call of this program will report it).
  (void)iorelay_flush(g_client);
  std::vector<InheritedFd> fds = Inheritable();
  char cwd[PATH_MAX];
  const bool forwarded_cwd = ForwardedCwd(cwd, sizeof cwd);
  bool stale = false;
  for (char* const* e = envp; e != nullptr && *e != nullptr; ++e) stale |= IsOurs(*e);
  if (fds.empty() && !forwarded_cwd && !stale) return;
  for (char* const* e = envp; e != nullptr && *e != nullptr; ++e) {
    if (!IsOurs(*e)) storage_.push_back(*e);
  }
  if (!fds.empty()) {
    inherit_ = std::string(kInheritEnv) + "=" + EncodeInherited(fds);
    storage_.push_back(inherit_.data());
  }
  if (forwarded_cwd) {
    cwd_ = std::string(kCwdEnv) + "=" + cwd;
    storage_.push_back(cwd_.data());
  }
  storage_.push_back(nullptr);
  envp_ = storage_.data();
}

void RestoreInheritedFds() {
  const char* text = getenv(kInheritEnv);
  if (text == nullptr) return;
  std::vector<InheritedFd> fds;
  if (DecodeInherited(text, &fds)) {
    for (const InheritedFd& d : fds) Restore(d);
  }
  unsetenv(kInheritEnv);
}

}  // namespace iorelay::preload
