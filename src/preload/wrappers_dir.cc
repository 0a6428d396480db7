// Directory streams on forwarded directories: the DIR* is the interposer's own object over a
// client listing (iorelay_dir), which holds one page of the directory at a time, so a listing
// costs the application about a page's memory however many entries it has.
#include <dirent.h>
#include <string.h>

#include <new>

#include "preload/fd_ops.h"
#include "preload/libc_next.h"
#include "preload/ptr_registry.h"
#include "preload/state.h"

using namespace iorelay::preload;

// readdir_r is deprecated but still imported by old binaries.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "x86_64: dirent64 == dirent");

namespace {

struct ForwardedDir {
  int fd = -1;  // a forwarded directory descriptor (dirfd), closed by closedir
  iorelay_dir* listing = nullptr;
  struct dirent64 entry;  // the entry readdir returned last
};

ForwardedDir* Lookup(DIR* d) { return static_cast<ForwardedDir*>(g_dirs.Find(d)); }

// Builds the stream over forwarded directory descriptor fd (owned on success).
DIR* MakeDir(int fd) {
  FdTable::Ref e = g_table.Acquire(fd);
  if (!e) return (errno = EBADF, nullptr);
  if (!(e->open_flags & O_DIRECTORY)) return (errno = ENOTDIR, nullptr);
  auto* d = new (std::nothrow) ForwardedDir;
  if (d == nullptr) return (errno = ENOMEM, nullptr);
  d->fd = fd;
  if (const int rc = iorelay_opendir(g_client, e->path.c_str(), &d->listing); rc < 0) {
    delete d;
    return (errno = -rc, nullptr);
  }
  DIR* handle = reinterpret_cast<DIR*>(d);
  g_dirs.Add(handle, d);
  return handle;
}

// The next entry into d->entry: 1, 0 at the end, or -errno. errno is left alone, whatever the
// calls under a page fetch did to it, so a caller's "errno = 0; readdir; errno?" sees only
// what this call reports.
int NextEntry(ForwardedDir* d) {
  const int saved = errno;
  const iorelay_dirent* de = nullptr;
  const int rc = iorelay_readdir_next(d->listing, &de);
  errno = saved;
  if (rc <= 0) return rc;
  struct dirent64& out = d->entry;
  memset(&out, 0, sizeof out);
  out.d_ino = de->ino;
  out.d_off = static_cast<off64_t>(iorelay_telldir(d->listing));  // the position after it
  out.d_reclen = sizeof out;
  out.d_type = de->type;
  strncpy(out.d_name, de->name, sizeof out.d_name - 1);
  return 1;
}

// readdir's result for NextEntry's: the entry, or null with errno set on an error only.
struct dirent64* EntryOrNull(ForwardedDir* d, int rc) {
  if (rc < 0) errno = -rc;
  return rc > 0 ? &d->entry : nullptr;
}

// readdir_r's: 0 (*result null at the end) or the error number.
template <class Dirent>
int CopyEntry(ForwardedDir* d, Dirent* entry, Dirent** result) {
  const int rc = NextEntry(d);
  if (rc > 0) memcpy(entry, &d->entry, sizeof *entry);
  *result = rc > 0 ? entry : nullptr;
  return rc < 0 ? -rc : 0;
}

}  // namespace

extern "C" {

IORELAY_EXPORT DIR* opendir(const char* path) {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) return REAL(opendir)(LibcPath(path, abs));
  int fd = OpenForwarded(abs.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0 && LeadsOutOfTheTree(errno, abs.c_str(), true, &abs)) {
    return REAL(opendir)(abs.c_str());  // a link out of the tree: libc lists its target
  }
  if (fd < 0) return nullptr;
  DIR* d = MakeDir(fd);
  if (d == nullptr) {
    int saved = errno;
    CloseForwarded(fd);
    errno = saved;
  }
  return d;
}

IORELAY_EXPORT DIR* fdopendir(int fd) {
  if (!IsForwardedFd(fd)) return REAL(fdopendir)(fd);
  return MakeDir(fd);
}

IORELAY_EXPORT struct dirent* readdir(DIR* dir) {
  ForwardedDir* d = Lookup(dir);
  if (d == nullptr) return REAL(readdir)(dir);
  return reinterpret_cast<struct dirent*>(EntryOrNull(d, NextEntry(d)));
}

IORELAY_EXPORT struct dirent64* readdir64(DIR* dir) {
  ForwardedDir* d = Lookup(dir);
  if (d == nullptr) return REAL(readdir64)(dir);
  return EntryOrNull(d, NextEntry(d));
}

IORELAY_EXPORT int readdir_r(DIR* dir, struct dirent* entry, struct dirent** result) {
  ForwardedDir* d = Lookup(dir);
  if (d == nullptr) return REAL(readdir_r)(dir, entry, result);
  return CopyEntry(d, entry, result);
}

IORELAY_EXPORT int readdir64_r(DIR* dir, struct dirent64* entry, struct dirent64** result) {
  ForwardedDir* d = Lookup(dir);
  if (d == nullptr) return REAL(readdir64_r)(dir, entry, result);
  return CopyEntry(d, entry, result);
}

IORELAY_EXPORT int closedir(DIR* dir) {
  auto* d = static_cast<ForwardedDir*>(g_dirs.Erase(dir));
  if (d == nullptr) return REAL(closedir)(dir);
  iorelay_closedir(d->listing);
  int rc = CloseForwarded(d->fd);
  delete d;
  return rc;
}

IORELAY_EXPORT int dirfd(DIR* dir) noexcept {
  ForwardedDir* d = Lookup(dir);
  return d == nullptr ? REAL(dirfd)(dir) : d->fd;
}

IORELAY_EXPORT void rewinddir(DIR* dir) noexcept {
  ForwardedDir* d = Lookup(dir);
  if (d == nullptr) return REAL(rewinddir)(dir);
  iorelay_rewinddir(d->listing);  // the next readdir lists the directory as it is then
}

IORELAY_EXPORT long telldir(DIR* dir) noexcept {
  ForwardedDir* d = Lookup(dir);
  return d == nullptr ? REAL(telldir)(dir) : static_cast<long>(iorelay_telldir(d->listing));
}

IORELAY_EXPORT void seekdir(DIR* dir, long pos) noexcept {
  ForwardedDir* d = Lookup(dir);
  if (d == nullptr) return REAL(seekdir)(dir, pos);
  if (pos >= 0) iorelay_seekdir(d->listing, static_cast<uint64_t>(pos));
}

}  // extern "C"
