// dlopen of a shared object on a forwarded path (a Python C extension in a virtual environment
// kept there, an application's plugin). The dynamic loader opens objects with its own system
// calls, which no interposer sees, so a forwarded object is staged: copied into a local
// directory of this user's ($IORELAY_STAGE_DIR, else ${TMPDIR:-/tmp}/iorelay-dl-UID, mode
// 0700, used by its descriptor), named by the file's identity and version (device, inode,
// size, modification time), so the processes of a node share one copy and a changed file gets
// a new one. The forwarded objects it needs are staged and loaded before it, depth first: a
// DT_NEEDED name not loaded yet, found in a forwarded directory of its search path (DT_RPATH
// or DT_RUNPATH with $ORIGIN as the object's forwarded directory, or LD_LIBRARY_PATH). The
// loader then finds them among the loaded objects by their SONAME. A link out of the tree is
// the loader's, at its target.
//
// A name without '/' is searched by libc's dlopen in its caller's RUNPATH: libc finds the
// caller by its return address, so on x86_64 dlopen is a jump into libc after the name is
// looked at, with no frame of the interposer's in between.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "client/env_table.h"
#include "client/internal_fds.h"
#include "common/mutex.h"
#include "preload/elf_dynamic.h"
#include "preload/libc_next.h"
#include "preload/path_resolve.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

constexpr int kMaxDepth = 16;  // objects needing objects needing ...

// This user's staging directory, opened after it is checked (a directory of ours that nobody
// else may write) and used by its descriptor from then on, so a directory put in its place
// later (a /tmp cleaner removed it, another user made one) is never written or read. The
// descriptor is checked before each use, as the application may have closed its number.
class StageDirectory {
 public:
  // The directory's descriptor, or -1 when it cannot be made safely; its path in *path.
  int Fd(std::string* path = nullptr) {
    iorelay::MutexLock lock(mu_);
    if (path != nullptr) *path = path_;
    struct stat st;
    // (A directory removed meanwhile, by a /tmp cleaner, has no links left: made again.)
    if (fd_ >= 0 && REAL(fstat)(fd_, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_ &&
        st.st_nlink > 0) {
      return fd_;
    }
    if (fd_ >= 0 && iorelay::client::IsInternalFd(fd_)) iorelay::client::CloseInternalFd(fd_);
    fd_ = Open();
    return fd_;
  }

 private:
  int Open() REQUIRES(mu_) {
    std::string d;
    if (const char* e = iorelay::client::ReadEnv(iorelay::client::EnvVarId::kStageDir);
        e != nullptr && *e != '\0') {
      d = e;
    } else {
      const char* tmp = getenv("TMPDIR");
      d = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/iorelay-dl-" +
          std::to_string(getuid());
    }
    if (REAL(mkdir)(d.c_str(), 0700) != 0 && errno != EEXIST) return -1;
    const int fd = REAL(open)(d.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0) return -1;
    if (REAL(fstat)(fd, &st) != 0 || st.st_uid != getuid() || (st.st_mode & 022) != 0) {
      REAL(close)(fd);
      return -1;
    }
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    path_ = d;
    // A high number the interposer keeps from the application: loaded objects are named
    // /proc/self/fd/N/NAME for as long as the process lives.
    return iorelay::client::AdoptInternalFd(fd);
  }

  iorelay::Mutex mu_;
  int fd_ GUARDED_BY(mu_) = -1;
  std::string path_ GUARDED_BY(mu_);
  dev_t dev_ GUARDED_BY(mu_) = 0;
  ino_t ino_ GUARDED_BY(mu_) = 0;
};

StageDirectory g_stage_dir;

std::string DirOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

// The staged copy's name for the forwarded regular file `fwd` (canonical), by its identity and
// version, and the size it must have: 0 or -errno.
int StagedName(const char* fwd, std::string* name, off_t* size) {
  struct stat st;
  if (int rc = iorelay_stat(g_client, fwd, &st, 0); rc < 0) return rc;
  if (!S_ISREG(st.st_mode)) return -EISDIR;
  *name = std::to_string(st.st_dev) + "-" + std::to_string(st.st_ino) + "-" +
          std::to_string(st.st_size) + "-" + std::to_string(st.st_mtim.tv_sec) + "." +
          std::to_string(st.st_mtim.tv_nsec) + "-" + (strrchr(fwd, '/') + 1);
  *size = st.st_size;
  return 0;
}

std::string LoaderPath(int dir, const std::string& name) {
  return "/proc/self/fd/" + std::to_string(dir) + "/" + name;
}

// Writes the whole of `fwd` as `name` in `dir`, atomically: a process sharing the directory
// sees the whole copy or none (an unnamed file linked in when complete; where the file system
// has none, a file of this thread's, renamed).
int Copy(const char* fwd, int dir, const std::string& name) {
  iorelay_file* f = nullptr;
  if (int rc = iorelay_open(g_client, fwd, O_RDONLY, 0, &f); rc < 0) return rc;
  const std::string part =
      "." + name + ".part." + std::to_string(getpid()) + "." + std::to_string(gettid());
  bool unnamed = true;
  int fd = openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0700);
  if (fd < 0) {
    unnamed = false;
    fd = openat(dir, part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0700);
  }
  int rc = fd < 0 ? -errno : CopyForwardedFile(f, fd);
  iorelay_close(f);
  if (rc == 0 && unnamed) {
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    if (linkat(AT_FDCWD, self.c_str(), dir, name.c_str(), AT_SYMLINK_FOLLOW) != 0 &&
        errno != EEXIST) {  // (another process linked its copy first)
      rc = -errno;
    }
  } else if (rc == 0 && renameat(dir, part.c_str(), dir, name.c_str()) != 0) {
    rc = -errno;
  }
  if (fd >= 0) REAL(close)(fd);
  if (rc < 0 && !unnamed) unlinkat(dir, part.c_str(), 0);
  return rc;
}

// The loader's path of the local copy of the forwarded regular file `fwd` (canonical), made
// when missing unless `make` is false: 0 or -errno.
int Stage(const char* fwd, bool make, std::string* path) {
  const int dir = g_stage_dir.Fd();
  if (dir < 0) return -EACCES;
  std::string name;
  off_t size = 0;
  if (int rc = StagedName(fwd, &name, &size); rc < 0) return rc;
  *path = LoaderPath(dir, name);
  struct stat have;
  if (fstatat(dir, name.c_str(), &have, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(have.st_mode) &&
      have.st_uid == getuid() && have.st_size == size) {
    return 0;
  }
  return make ? Copy(fwd, dir, name) : -ENOENT;
}

bool Loaded(const char* name) {
  void* h = REAL(dlopen)(name, RTLD_LAZY | RTLD_NOLOAD);
  if (h != nullptr) dlclose(h);
  return h != nullptr;
}

// One dlopen's walk over the forwarded objects: the binding flags for each (RTLD_LAZY: an
// object loaded on its own lacks the search list its parent gives it, so a symbol it takes
// from a sibling it does not name is only there once the sibling is loaded), the objects
// already seen (a cycle of objects needing each other is walked once), and those that did not
// load at the first try, tried again once the others are.
// For a program to exec (`collect`), nothing is loaded: each forwarded object found is staged
// and listed under the name it is needed by, for a directory of links the loader searches.
struct Walk {
  int mode;
  std::set<std::string> seen;
  std::vector<std::string> retry;
  bool collect = false;
  std::vector<std::pair<std::string, std::string>> found;  // (needed name, staged copy's path)
};

void Load(const std::string& path, Walk* walk) {
  if (REAL(dlopen)(path.c_str(), walk->mode) == nullptr) walk->retry.push_back(path);
}

bool StageAndLoad(const char* fwd, const std::string& needed, Walk* walk, int depth);

// Loads the forwarded objects the staged object `local` needs (its forwarded directory
// `origin`), so that the loader finds them loaded.
void LoadNeeded(const std::string& local, const std::string& origin, Walk* walk, int depth) {
  const int fd = REAL(open)(local.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  void* map =
      REAL(fstat)(fd, &st) == 0 && st.st_size > 0
          ? REAL(mmap)(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0)
          : MAP_FAILED;
  REAL(close)(fd);
  if (map == MAP_FAILED) return;
  ElfDynamic d;
  const bool elf =
      ReadElfDynamic(static_cast<const unsigned char*>(map), static_cast<size_t>(st.st_size), &d);
  munmap(map, static_cast<size_t>(st.st_size));
  if (!elf) return;
  const std::vector<std::string> dirs = SearchDirectories(d, origin, getenv("LD_LIBRARY_PATH"));
  for (const std::string& name : d.needed) {
    if (name.find('/') != std::string::npos || (!walk->collect && Loaded(name.c_str()))) continue;
    for (const std::string& dir : dirs) {
      const std::string candidate = dir + "/" + name;
      AbsPath abs;
      if (!ForwardedPath(AT_FDCWD, candidate.c_str(), &abs)) {
        if (REAL(access)(candidate.c_str(), F_OK) == 0) break;  // the loader finds it there
        continue;
      }
      if (StageAndLoad(abs.c_str(), name, walk, depth + 1)) break;
    }
  }
}

// Stages the forwarded object `fwd` (needed as `needed`) and what it needs, and loads it (kept
// loaded: an object that needs it follows), or lists it when the walk collects. False when
// `fwd` is not there (the search goes on in the next directory); a path that a link leads out
// of the tree counts as not there, as the daemon's stat of it is refused.
bool StageAndLoad(const char* fwd, const std::string& needed, Walk* walk, int depth) {
  char canonical[PATH_MAX];
  const int n = CanonicalForwarded(fwd, canonical, sizeof canonical);
  if (n < 0 || n == kLeftTheTree) return false;
  if (depth > kMaxDepth || !walk->seen.insert(canonical).second) return true;
  std::string local;
  if (Stage(canonical, true, &local) < 0) return true;
  LoadNeeded(local, DirOf(canonical), walk, depth);
  if (walk->collect) {
    walk->found.emplace_back(needed, local);
  } else {
    Load(local, walk);
  }
  return true;
}

}  // namespace

namespace iorelay::preload {

std::string StageProgramLibraries(int copy, const std::string& origin) {
  Walk walk{RTLD_LAZY, {}, {}, true, {}};
  LoadNeeded("/proc/self/fd/" + std::to_string(copy), origin, &walk, 0);
  std::string stage;
  const int dir = g_stage_dir.Fd(&stage);
  if (walk.found.empty() || dir < 0) return "";
  // Named by what it holds, made aside and renamed into place: processes running one program
  // share it, and none sees it half made.
  std::string key;
  for (const auto& [name, path] : walk.found) key += name + "=" + path + "\n";
  const std::string final_name = "lib-" + std::to_string(std::hash<std::string>{}(key));
  struct stat st;
  if (fstatat(dir, final_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
      st.st_uid == getuid()) {
    return stage + "/" + final_name;
  }
  const std::string part =
      "." + final_name + ".part." + std::to_string(getpid()) + "." + std::to_string(gettid());
  if (mkdirat(dir, part.c_str(), 0700) != 0) return "";
  const int sub = openat(dir, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  bool made = sub >= 0;
  for (const auto& [name, path] : walk.found) {
    const std::string target = "../" + path.substr(path.rfind('/') + 1);  // (its staged copy)
    made = made && symlinkat(target.c_str(), sub, name.c_str()) == 0;
  }
  if (sub >= 0) REAL(close)(sub);
  if (made && renameat(dir, part.c_str(), dir, final_name.c_str()) == 0) {
    return stage + "/" + final_name;
  }
  // (Another process made it first, or a link failed: ours is removed.)
  const int again = openat(dir, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  for (const auto& [name, path] : walk.found) {
    if (again >= 0) unlinkat(again, name.c_str(), 0);
  }
  if (again >= 0) REAL(close)(again);
  unlinkat(dir, part.c_str(), AT_REMOVEDIR);
  return fstatat(dir, final_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? stage + "/" + final_name
                                                                         : "";
}

}  // namespace iorelay::preload

extern "C" {

// Set before every jump: libc's dlopen.
__attribute__((visibility("hidden"), used)) void* g_iorelay_real_dlopen = nullptr;

// The name libc's dlopen is to get for `file` opened with `mode`: itself, or its staged copy
// (its forwarded dependencies loaded first; with RTLD_NOLOAD nothing is copied or loaded), or a
// link's local target. Valid until this thread's next call.
__attribute__((visibility("hidden"), used)) const char* IorelayDlopenName(const char* file,
                                                                          int mode) {
  if (__atomic_load_n(&g_iorelay_real_dlopen, __ATOMIC_ACQUIRE) == nullptr) {
    __atomic_store_n(&g_iorelay_real_dlopen, reinterpret_cast<void*>(REAL(dlopen)),
                     __ATOMIC_RELEASE);
  }
  if (file == nullptr || g_client == nullptr || strchr(file, '/') == nullptr) return file;
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, file, &abs)) return file;
  const int saved = errno;
  char canonical[PATH_MAX];
  const int n = CanonicalForwarded(abs.c_str(), canonical, sizeof canonical);
  // (Built here and kept only at the end: loading the dependencies runs their constructors,
  // which may dlopen too.)
  std::string result = file;  // the loader's own answer: not found
  if (n == kLeftTheTree) {
    result = canonical;
  } else if (n >= 0) {
    const bool no_load = (mode & RTLD_NOLOAD) != 0;
    std::string local;
    if (Stage(canonical, !no_load, &local) == 0) {
      if (!no_load) {
        Walk walk{RTLD_LAZY | (mode & (RTLD_GLOBAL | RTLD_NODELETE | RTLD_DEEPBIND)), {}, {}};
        walk.seen.insert(canonical);
        LoadNeeded(local, DirOf(canonical), &walk, 0);
        for (const std::string& path : walk.retry) REAL(dlopen)(path.c_str(), walk.mode);
      }
      result = std::move(local);
    }
  }
  thread_local std::string name;
  name = std::move(result);
  errno = saved;
  return name.c_str();
}

}  // extern "C"

#if defined(__x86_64__)
// dlopen(file, mode): the name looked at (file and mode are already IorelayDlopenName's
// arguments), then a jump to libc's dlopen with the caller's return address still on the stack
// (the arguments kept across the call; the stack 16-byte aligned at it).
asm(R"(
  .text
  .globl dlopen
  .type dlopen, @function
dlopen:
  .cfi_startproc
  endbr64
  push %rdi
  .cfi_adjust_cfa_offset 8
  push %rsi
  .cfi_adjust_cfa_offset 8
  sub $8, %rsp
  .cfi_adjust_cfa_offset 8
  call IorelayDlopenName
  add $8, %rsp
  .cfi_adjust_cfa_offset -8
  pop %rsi
  .cfi_adjust_cfa_offset -8
  pop %rdi
  .cfi_adjust_cfa_offset -8
  mov %rax, %rdi
  jmp *g_iorelay_real_dlopen(%rip)
  .cfi_endproc
  .size dlopen, .-dlopen
)");
#else
extern "C" IORELAY_EXPORT void* dlopen(const char* file, int mode) {
  const char* name = IorelayDlopenName(file, mode);
  return reinterpret_cast<void* (*)(const char*, int)>(g_iorelay_real_dlopen)(name, mode);
}
#endif
