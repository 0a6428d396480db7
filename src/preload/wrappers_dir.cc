// Directory streams on forwarded directories: the listing is fetched whole at opendir
// and served from memory; the DIR* is the interposer's own object.
#include <dirent.h>
#include <string.h>

#include <new>
#include <utility>
#include <vector>

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
  std::vector<struct dirent64> entries;
  size_t pos = 0;
};

ForwardedDir* Lookup(DIR* d) { return static_cast<ForwardedDir*>(g_dirs.Find(d)); }

// The listing of the forwarded directory `path`, whole; 0 or an errno (no listing rather than a
// short one when a page fails).
int FetchListing(const char* path, std::vector<struct dirent64>* entries) {
  iorelay_dir* rd = nullptr;
  int rc = iorelay_opendir(g_client, path, &rd);
  if (rc < 0) return -rc;
  entries->clear();
  errno = 0;
  while (const iorelay_dirent* de = iorelay_readdir(rd)) {
    struct dirent64 out;
    memset(&out, 0, sizeof out);
    out.d_ino = de->ino;
    out.d_off = static_cast<off64_t>(entries->size() + 1);
    out.d_reclen = sizeof out;
    out.d_type = de->type;
    strncpy(out.d_name, de->name, sizeof out.d_name - 1);
    entries->push_back(out);
  }
  const int err = errno;
  iorelay_closedir(rd);
  return err;
}

// Builds the stream over forwarded directory descriptor fd (owned on success).
DIR* MakeDir(int fd) {
  FdTable::Ref e = g_table.Acquire(fd);
  if (!e) return (errno = EBADF, nullptr);
  if (!(e->open_flags & O_DIRECTORY)) return (errno = ENOTDIR, nullptr);
  auto* d = new (std::nothrow) ForwardedDir;
  if (d == nullptr) return (errno = ENOMEM, nullptr);
  d->fd = fd;
  if (const int err = FetchListing(e->path.c_str(), &d->entries); err != 0) {
    delete d;
    return (errno = err, nullptr);
  }
  DIR* handle = reinterpret_cast<DIR*>(d);
  g_dirs.Add(handle, d);
  return handle;
}

struct dirent64* NextEntry(ForwardedDir* d) {
  return d->pos < d->entries.size() ? &d->entries[d->pos++] : nullptr;
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
  return reinterpret_cast<struct dirent*>(NextEntry(d));
}

IORELAY_EXPORT struct dirent64* readdir64(DIR* dir) {
  ForwardedDir* d = Lookup(dir);
  if (d == nullptr) return REAL(readdir64)(dir);
  return NextEntry(d);
}

IORELAY_EXPORT int readdir_r(DIR* dir, struct dirent* entry, struct dirent** result) {
  ForwardedDir* d = Lookup(dir);
  if (d == nullptr) return REAL(readdir_r)(dir, entry, result);
  struct dirent64* e = NextEntry(d);
  if (e != nullptr) memcpy(entry, e, sizeof *entry);
  *result = e != nullptr ? entry : nullptr;
  return 0;
}

IORELAY_EXPORT int readdir64_r(DIR* dir, struct dirent64* entry, struct dirent64** result) {
  ForwardedDir* d = Lookup(dir);
  if (d == nullptr) return REAL(readdir64_r)(dir, entry, result);
  struct dirent64* e = NextEntry(d);
  if (e != nullptr) memcpy(entry, e, sizeof *entry);
  *result = e != nullptr ? entry : nullptr;
  return 0;
}

IORELAY_EXPORT int closedir(DIR* dir) {
  auto* d = static_cast<ForwardedDir*>(g_dirs.Erase(dir));
  if (d == nullptr) return REAL(closedir)(dir);
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
  // As locally, the stream then sees the directory as it is now (the old listing stays if the
  // daemon cannot give it: rewinddir has no error to report).
  d->pos = 0;
  FdTable::Ref e = g_table.Acquire(d->fd);
  std::vector<struct dirent64> now;
  const int saved = errno;
  if (e && FetchListing(e->path.c_str(), &now) == 0) d->entries = std::move(now);
  errno = saved;
}

IORELAY_EXPORT long telldir(DIR* dir) noexcept {
  ForwardedDir* d = Lookup(dir);
  return d == nullptr ? REAL(telldir)(dir) : static_cast<long>(d->pos);
}

IORELAY_EXPORT void seekdir(DIR* dir, long pos) noexcept {
  ForwardedDir* d = Lookup(dir);
  if (d == nullptr) return REAL(seekdir)(dir, pos);
  if (pos >= 0 && static_cast<size_t>(pos) <= d->entries.size()) d->pos = static_cast<size_t>(pos);
}

}  // extern "C"
