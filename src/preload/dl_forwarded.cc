// dlopen of a shared object on a forwarded path (a Python C extension in a virtual environment
// kept there, an application's plugin). The dynamic loader opens objects with its own system
// calls, which no interposer sees, so a forwarded object is staged: copied into a local
// directory of this user's ($IORELAY_STAGE_DIR, else ${TMPDIR:-/tmp}/iorelay-dl-UID, mode
// 0700), named by the file's identity and version (device, inode, size, modification time), so
// the processes of a node share one copy and a changed file gets a new one. The forwarded
// objects it needs are staged and loaded before it, depth first: a DT_NEEDED name not loaded
// yet, found in a forwarded directory of its search path (DT_RPATH or DT_RUNPATH with $ORIGIN
// as the object's forwarded directory, or LD_LIBRARY_PATH). The loader then finds them among
// the loaded objects by their SONAME. A link out of the tree is the loader's, at its target.
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
#include <string>

#include "preload/elf_dynamic.h"
#include "preload/libc_next.h"
#include "preload/path_resolve.h"
#include "preload/state.h"

using namespace iorelay::preload;

namespace {

constexpr int kMaxDepth = 16;  // objects needing objects needing ... (a cycle ends here)

// This user's staging directory, made on first use; "" when it cannot be made safely (not a
// directory of ours that only we may write).
const std::string& StageDir() {
  static const std::string dir = [] {
    std::string d;
    if (const char* e = getenv("IORELAY_STAGE_DIR"); e != nullptr && *e != '\0') {
      d = e;
    } else {
      const char* tmp = getenv("TMPDIR");
      d = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/iorelay-dl-" +
          std::to_string(getuid());
    }
    struct stat st;
    if (REAL(mkdir)(d.c_str(), 0700) != 0 && errno != EEXIST) return std::string();
    if (REAL(lstat)(d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 022) != 0) {
      return std::string();
    }
    return d;
  }();
  return dir;
}

std::string DirOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

// The local copy of the forwarded regular file `fwd` (canonical), made if missing: 0 or -errno.
int Stage(const char* fwd, std::string* local) {
  const std::string& dir = StageDir();
  if (dir.empty()) return -EACCES;
  struct stat st;
  if (int rc = iorelay_stat(g_client, fwd, &st, 0); rc < 0) return rc;
  if (!S_ISREG(st.st_mode)) return -EISDIR;
  *local = dir + "/" + std::to_string(st.st_dev) + "-" + std::to_string(st.st_ino) + "-" +
           std::to_string(st.st_size) + "-" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec) + "-" + (strrchr(fwd, '/') + 1);
  struct stat have;
  if (REAL(stat)(local->c_str(), &have) == 0 && have.st_size == st.st_size) return 0;
  iorelay_file* f = nullptr;
  if (int rc = iorelay_open(g_client, fwd, O_RDONLY, 0, &f); rc < 0) return rc;
  // Written under a name of its own, then renamed: a process sharing the directory sees the
  // whole copy or none.
  const std::string part =
      *local + ".part." + std::to_string(getpid()) + "." + std::to_string(gettid());
  const int fd = REAL(open)(part.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
  int rc = fd < 0 ? -errno : CopyForwardedFile(f, fd);
  iorelay_close(f);
  if (fd >= 0) REAL(close)(fd);
  if (rc == 0 && REAL(rename)(part.c_str(), local->c_str()) != 0) rc = -errno;
  if (rc < 0 && fd >= 0) REAL(unlink)(part.c_str());
  return rc;
}

bool Loaded(const char* name) {
  void* h = REAL(dlopen)(name, RTLD_LAZY | RTLD_NOLOAD);
  if (h != nullptr) dlclose(h);
  return h != nullptr;
}

void StageAndLoad(const char* fwd, int depth);

// Loads the forwarded objects the staged object `local` needs (its forwarded directory
// `origin`), so that the loader finds them loaded.
void LoadNeeded(const std::string& local, const std::string& origin, int depth) {
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
    if (name.find('/') != std::string::npos || Loaded(name.c_str())) continue;
    for (const std::string& dir : dirs) {
      const std::string candidate = dir + "/" + name;
      AbsPath abs;
      if (!ForwardedPath(AT_FDCWD, candidate.c_str(), &abs)) {
        if (REAL(access)(candidate.c_str(), F_OK) == 0) break;  // the loader finds it there
        continue;
      }
      struct stat found;
      if (iorelay_stat(g_client, abs.c_str(), &found, 0) < 0) continue;
      StageAndLoad(abs.c_str(), depth + 1);
      break;
    }
  }
}

// Stages the forwarded object `fwd` and what it needs, and loads it (kept loaded: an object
// that needs it follows).
void StageAndLoad(const char* fwd, int depth) {
  if (depth > kMaxDepth) return;
  char canonical[PATH_MAX];
  const int n = CanonicalForwarded(fwd, canonical, sizeof canonical);
  if (n == kLeftTheTree) {
    REAL(dlopen)(canonical, RTLD_LAZY);
    return;
  }
  std::string local;
  if (n < 0 || Stage(canonical, &local) < 0) return;
  LoadNeeded(local, DirOf(canonical), depth);
  REAL(dlopen)(local.c_str(), RTLD_LAZY);
}

}  // namespace

extern "C" {

// Set before every jump: libc's dlopen.
__attribute__((visibility("hidden"))) void* g_iorelay_real_dlopen = nullptr;

// The name libc's dlopen is to get for `file`: itself, or its staged copy (its forwarded
// dependencies loaded first), or a link's local target. Valid until this thread's next call.
__attribute__((visibility("hidden"))) const char* IorelayDlopenName(const char* file) {
  if (__atomic_load_n(&g_iorelay_real_dlopen, __ATOMIC_ACQUIRE) == nullptr) {
    __atomic_store_n(&g_iorelay_real_dlopen, reinterpret_cast<void*>(REAL(dlopen)),
                     __ATOMIC_RELEASE);
  }
  if (file == nullptr || g_client == nullptr || strchr(file, '/') == nullptr) return file;
  AbsPath abs;
  if (!ForwardedPath(AT_FDCWD, file, &abs)) return file;
  thread_local std::string name;
  const int saved = errno;
  char canonical[PATH_MAX];
  const int n = CanonicalForwarded(abs.c_str(), canonical, sizeof canonical);
  if (n == kLeftTheTree) {
    name = canonical;
  } else if (n < 0 || Stage(canonical, &name) < 0) {
    name = file;  // the loader's own answer: not found
  } else {
    LoadNeeded(name, DirOf(canonical), 0);
  }
  errno = saved;
  return name.c_str();
}

}  // extern "C"

#if defined(__x86_64__)
// dlopen(file, mode): the name looked at, then a jump to libc's dlopen with the caller's return
// address still on the stack (the arguments kept across the call; the stack 16-byte aligned
// at it).
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
  const char* name = IorelayDlopenName(file);
  return reinterpret_cast<void* (*)(const char*, int)>(g_iorelay_real_dlopen)(name, mode);
}
#endif
