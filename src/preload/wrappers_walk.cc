// nftw and ftw over forwarded trees. glibc walks with its internal opendir and stat, which the
// interposer does not see; this walk uses the interposed ones, with glibc's semantics: the
// flags FTW_PHYS, FTW_DEPTH, FTW_MOUNT, FTW_CHDIR and FTW_ACTIONRETVAL, and the type flags
// FTW_F, FTW_D, FTW_DP, FTW_DNR, FTW_NS, FTW_SL and FTW_SLN. Other trees go to glibc.
#include <dirent.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "preload/libc_next.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

// `Fn`: the caller's callback as fn(path, const struct stat*, type, struct FTW*).
template <class Fn>
struct Walk {
  Fn fn;
  int flags;
  dev_t dev = 0;  // the tree's (FTW_MOUNT)
};

// What a callback's result means under FTW_ACTIONRETVAL (else any non-zero stops the walk).
enum class Next { kGoOn, kSkipSubtree, kSkipSiblings, kStop };

template <class Fn>
Next Judge(const Walk<Fn>& w, int rc, int* result) {
  if (!(w.flags & FTW_ACTIONRETVAL)) {
    if (rc == 0) return Next::kGoOn;
    *result = rc;
    return Next::kStop;
  }
  switch (rc) {
    case FTW_CONTINUE:
      return Next::kGoOn;
    case FTW_SKIP_SUBTREE:
      return Next::kSkipSubtree;
    case FTW_SKIP_SIBLINGS:
      return Next::kSkipSiblings;
    default:
      *result = rc;
      return Next::kStop;
  }
}

// One entry (and, for a directory, what it holds), `path` as the caller's root plus names,
// `name` its last one.
template <class Fn>
Next Visit(const Walk<Fn>& w, const std::string& path, const char* name, int level, int* result) {
  struct stat st;
  int type;
  const bool phys = (w.flags & FTW_PHYS) != 0;
  if ((phys ? lstat(path.c_str(), &st) : stat(path.c_str(), &st)) != 0) {
    type = (!phys && lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) ? FTW_SLN : FTW_NS;
  } else if (S_ISLNK(st.st_mode)) {
    type = FTW_SL;
  } else if (S_ISDIR(st.st_mode)) {
    type = FTW_D;
  } else {
    type = FTW_F;
  }
  struct FTW ftw;
  const size_t slash = path.find_last_of('/');
  ftw.base = slash == std::string::npos || path.size() == 1 ? 0 : static_cast<int>(slash + 1);
  ftw.level = level;
  if (type != FTW_D) return Judge(w, w.fn(path.c_str(), &st, type, &ftw), result);
  if ((w.flags & FTW_MOUNT) && st.st_dev != w.dev) return Next::kGoOn;

  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return Judge(w, w.fn(path.c_str(), &st, FTW_DNR, &ftw), result);
  if (!(w.flags & FTW_DEPTH)) {
    Next n = Judge(w, w.fn(path.c_str(), &st, FTW_D, &ftw), result);
    if (n != Next::kGoOn) {
      closedir(dir);
      return n == Next::kSkipSubtree ? Next::kGoOn : n;
    }
  }
  // The names first: the callback may change the tree, and a walk holds one directory open.
  std::vector<std::string> names;
  int read_error = 0;
  for (;;) {
    errno = 0;  // readdir's only way to tell an error from the end
    struct dirent* e = readdir(dir);
    if (e == nullptr) {
      read_error = errno;
      break;
    }
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
  }
  closedir(dir);
  // A listing cut short (a page the daemon did not give) fails the walk, as POSIX's nftw
  // fails on an error other than EACCES, rather than skipping what it did not list.
  if (read_error != 0) {
    *result = -1;
    errno = read_error;
    return Next::kStop;
  }
  // FTW_CHDIR: the entries (and FTW_DP) see the directory as the working directory, entered by
  // its name from the parent (the root by its path) and left by ".." (the root's caller
  // restores the starting one).
  const bool entered = (w.flags & FTW_CHDIR) && chdir(level == 0 ? path.c_str() : name) == 0;
  const std::string base = path.back() == '/' ? path : path + "/";
  Next end = Next::kGoOn;
  for (const std::string& entry : names) {
    Next n = Visit(w, base + entry, entry.c_str(), level + 1, result);
    if (n == Next::kStop) end = n;
    if (n == Next::kStop || n == Next::kSkipSiblings) break;
  }
  if (end != Next::kStop && (w.flags & FTW_DEPTH)) {
    end = Judge(w, w.fn(path.c_str(), &st, FTW_DP, &ftw), result);
  }
  if (entered && level > 0) {
    const int err = errno;  // a failed walk's
    (void)chdir("..");
    errno = err;
  }
  return end;
}

template <class Fn>
int WalkForwarded(const char* root, Fn fn, int flags) {
  struct stat st;
  Walk<Fn> w{fn, flags};
  // A root that is not there is an error, not a callback (but a dangling link, FTW_SLN), as
  // glibc's.
  const bool phys = (flags & FTW_PHYS) != 0;
  if ((phys ? lstat(root, &st) : stat(root, &st)) != 0) {
    const int err = errno;
    if (phys || lstat(root, &st) != 0 || !S_ISLNK(st.st_mode)) return Fail(err);
  }
  w.dev = st.st_dev;
  char cwd[PATH_MAX];
  const bool back = (flags & FTW_CHDIR) && getcwd(cwd, sizeof cwd) != nullptr;
  int result = 0;
  Visit(w, root, root, 0, &result);
  const int err = errno;  // a failed walk's
  if (back) (void)chdir(cwd);
  errno = err;
  return result;
}

static_assert(sizeof(struct stat) == sizeof(struct stat64), "x86_64: stat64 == stat");

// The 64-bit callbacks take the same structure under its other name.
template <class Stat, class Fn>
auto AsStatCallback(Fn fn) {
  return [fn](const char* path, const struct stat* st, int type, struct FTW* ftw) {
    return fn(path, reinterpret_cast<const Stat*>(st), type, ftw);
  };
}

// ftw: nftw without flags (links followed), and no FTW_SLN (a dangling link is FTW_NS).
template <class Stat>
int FtwForwarded(const char* root, int (*fn)(const char*, const Stat*, int)) {
  auto through = [fn](const char* path, const struct stat* st, int type, struct FTW*) {
    return fn(path, reinterpret_cast<const Stat*>(st), type == FTW_SLN ? FTW_NS : type);
  };
  return WalkForwarded(root, through, 0);
}

}  // namespace

extern "C" {

IORELAY_EXPORT int nftw(const char* dir,
                        int (*fn)(const char*, const struct stat*, int, struct FTW*), int nopenfd,
                        int flags) {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, dir, &abs))
    return REAL(nftw)(LibcPath(dir, abs), fn, nopenfd, flags);
  return WalkForwarded(dir, fn, flags);
}

IORELAY_EXPORT int nftw64(const char* dir,
                          int (*fn)(const char*, const struct stat64*, int, struct FTW*),
                          int nopenfd, int flags) {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, dir, &abs)) {
    return REAL(nftw64)(LibcPath(dir, abs), fn, nopenfd, flags);
  }
  return WalkForwarded(dir, AsStatCallback<struct stat64>(fn), flags);
}

IORELAY_EXPORT int ftw(const char* dir, int (*fn)(const char*, const struct stat*, int),
                       int nopenfd) {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, dir, &abs)) return REAL(ftw)(LibcPath(dir, abs), fn, nopenfd);
  return FtwForwarded(dir, fn);
}

IORELAY_EXPORT int ftw64(const char* dir, int (*fn)(const char*, const struct stat64*, int),
                         int nopenfd) {
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, dir, &abs)) return REAL(ftw64)(LibcPath(dir, abs), fn, nopenfd);
  return FtwForwarded(dir, fn);
}

}  // extern "C"
