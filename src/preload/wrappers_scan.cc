// Directory walks that glibc runs on its internal opendir and stat, which bypass the interposer:
// glob (given the interposer's own directory and stat functions through GLOB_ALTDIRFUNC) and
// scandir (built here on the interposed opendir and readdir).
#include <dirent.h>
#include <glob.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <vector>

#include "preload/libc_next.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

// glob through the interposer's wrappers, which pass what is not forwarded on to libc; the
// caller's own GLOB_ALTDIRFUNC functions are kept.
void* OpendirAlt(const char* path) { return opendir(path); }
void ClosedirAlt(void* dir) { closedir(static_cast<DIR*>(dir)); }
struct dirent* ReaddirAlt(void* dir) {
  return readdir(static_cast<DIR*>(dir));
}
struct dirent64* Readdir64Alt(void* dir) {
  return readdir64(static_cast<DIR*>(dir));
}

template <class Glob, class Real, class Readdir, class Stat>
int GlobThrough(const char* pattern, int flags, int (*errfunc)(const char*, int), Glob* pglob,
                Real real, Readdir read_entry, Stat stat_fn, Stat lstat_fn) {
  if (g_client != nullptr && !(flags & GLOB_ALTDIRFUNC) && pglob != nullptr) {
    pglob->gl_opendir = &OpendirAlt;
    pglob->gl_readdir = read_entry;
    pglob->gl_closedir = &ClosedirAlt;
    pglob->gl_stat = stat_fn;
    pglob->gl_lstat = lstat_fn;
    flags |= GLOB_ALTDIRFUNC;
  }
  return real(pattern, flags, errfunc, pglob);
}

// scandir over the interposed opendir/readdir: entries copied with malloc (the caller frees
// each and the array), filtered, sorted with qsort as glibc does. A readdir error fails the
// call, as glibc's.
template <class Dirent, class Readdir>
int ScanForwarded(const char* path, Dirent*** namelist, int (*filter)(const Dirent*),
                  int (*compar)(const Dirent**, const Dirent**), Readdir read_entry) {
  DIR* dir = opendir(path);
  if (dir == nullptr) return -1;
  std::vector<Dirent*> kept;
  int err = 0;
  for (;;) {
    errno = 0;  // readdir's only way to tell an error from the end; the filter may set it
    Dirent* e = read_entry(dir);
    if (e == nullptr) {
      err = errno;
      break;
    }
    if (filter != nullptr && filter(e) == 0) continue;
    // As glibc's, a copy as long as its name (a whole struct is 280 bytes an entry).
    const size_t size = (offsetof(Dirent, d_name) + strlen(e->d_name) + 1 + 7) & ~size_t{7};
    auto* copy = static_cast<Dirent*>(malloc(size));
    if (copy == nullptr) {
      err = ENOMEM;
      break;
    }
    memcpy(copy, e, size);
    copy->d_reclen = static_cast<unsigned short>(size);
    kept.push_back(copy);
  }
  closedir(dir);
  Dirent** out =
      err == 0 ? static_cast<Dirent**>(malloc((kept.size() + 1) * sizeof(Dirent*))) : nullptr;
  if (err == 0 && out == nullptr) err = ENOMEM;
  if (err != 0) {
    for (Dirent* e : kept) free(e);
    return Fail(err);
  }
  std::copy(kept.begin(), kept.end(), out);
  if (compar != nullptr) {
    qsort(out, kept.size(), sizeof(Dirent*),
          reinterpret_cast<int (*)(const void*, const void*)>(compar));
  }
  *namelist = out;
  return static_cast<int>(kept.size());
}

}  // namespace

extern "C" {

IORELAY_EXPORT int glob(const char* pattern, int flags, int (*errfunc)(const char*, int),
                        glob_t* pglob) noexcept {
  return GlobThrough(pattern, flags, errfunc, pglob, REAL(glob), &ReaddirAlt, &stat, &lstat);
}

IORELAY_EXPORT int glob64(const char* pattern, int flags, int (*errfunc)(const char*, int),
                          glob64_t* pglob) noexcept {
  return GlobThrough(pattern, flags, errfunc, pglob, REAL(glob64), &Readdir64Alt, &stat64,
                     &lstat64);
}

IORELAY_EXPORT int scandir(const char* path, struct dirent*** namelist,
                           int (*filter)(const struct dirent*),
                           int (*compar)(const struct dirent**, const struct dirent**)) {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs))
    return REAL(scandir)(LibcPath(path, abs), namelist, filter, compar);
  return ScanForwarded(abs.c_str(), namelist, filter, compar, &readdir);
}

IORELAY_EXPORT int scandir64(const char* path, struct dirent64*** namelist,
                             int (*filter)(const struct dirent64*),
                             int (*compar)(const struct dirent64**, const struct dirent64**)) {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, path, &abs)) {
    return REAL(scandir64)(LibcPath(path, abs), namelist, filter, compar);
  }
  return ScanForwarded(abs.c_str(), namelist, filter, compar, &readdir64);
}

IORELAY_EXPORT int scandirat(int dirfd, const char* path, struct dirent*** namelist,
                             int (*filter)(const struct dirent*),
                             int (*compar)(const struct dirent**, const struct dirent**)) {
  AbsPath abs;
  if (!ForwardedPath(dirfd, path, &abs)) {
    return REAL(scandirat)(dirfd, LibcPath(path, abs), namelist, filter, compar);
  }
  return ScanForwarded(abs.c_str(), namelist, filter, compar, &readdir);
}

}  // extern "C"
