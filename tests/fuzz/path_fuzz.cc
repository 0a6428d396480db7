// libFuzzer target over path confinement: any client path is either refused or opens something
// inside the export root. The root holds symlinks that point out of it (relative, absolute,
// chained, through /proc/self/root) so that the inputs can try every way out.
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "backend/beneath.h"
#include "daemon/exports.h"

namespace {

struct Root {
  std::string dir;   // the export root, real path
  std::string base;  // its parent: a file there must never be reached
  iorelay::daemon::Exports exports;
};

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  ::remove(path);  // (depth first: a directory is empty when its turn comes)
  return 0;
}

Root* MakeRoot() {
  char tmpl[] = "/tmp/iorelay-path-fuzz-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) std::abort();
  auto* r = new Root;
  char real[PATH_MAX];
  if (::realpath(tmpl, real) == nullptr) std::abort();
  r->base = real;
  // Removed when the fuzzer ends normally (a crash leaves it, with the input that made it).
  static std::string made;
  made = r->base;
  std::atexit([] { ::nftw(made.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS); });
  r->dir = r->base + "/root";
  bool ok = ::mkdir(r->dir.c_str(), 0755) == 0 && ::mkdir((r->dir + "/d").c_str(), 0755) == 0;
  std::FILE* outside = std::fopen((r->base + "/secret").c_str(), "w");
  ok = ok && outside != nullptr && std::fclose(outside) == 0;
  std::FILE* inside = std::fopen((r->dir + "/d/f").c_str(), "w");
  ok = ok && inside != nullptr && std::fclose(inside) == 0;
  ok = ok && ::symlink("../secret", (r->dir + "/up").c_str()) == 0;
  ok = ok && ::symlink("/etc/passwd", (r->dir + "/abs").c_str()) == 0;
  ok = ok && ::symlink("up", (r->dir + "/d/chain").c_str()) == 0;
  ok = ok && ::symlink("/proc/self/root/etc", (r->dir + "/proc").c_str()) == 0;
  ok = ok && ::symlink("d/f", (r->dir + "/in").c_str()) == 0;
  ok = ok && r->exports.Add("/data", r->dir).ok();
  if (!ok) std::abort();
  return r;
}

// Aborts when an open succeeded outside the root.
void CheckInside(const Root& root, const std::string& path, iorelay::Result<int> fd) {
  if (!fd.ok()) return;
  char link[64], target[PATH_MAX];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", *fd);
  const ssize_t n = ::readlink(link, target, sizeof target - 1);
  ::close(*fd);
  if (n < 0) std::abort();
  const std::string opened(target, static_cast<size_t>(n));
  if (opened != root.dir && opened.rfind(root.dir + "/", 0) != 0) {
    std::fprintf(stderr, "path_fuzz: '%s' opened '%s', outside %s\n", path.c_str(), opened.c_str(),
                 root.dir.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Root* root = MakeRoot();
  const std::string path = "/data/" + std::string(reinterpret_cast<const char*>(data), size);
  iorelay::Result<iorelay::daemon::Mapped> m = root->exports.Map(path);
  if (!m.ok()) return 0;
  // O_PATH: nothing is created, read or followed into a device; what opens is what counts.
  // Both resolutions: openat2 (the default) and the component walk used without it.
  CheckInside(*root, path, iorelay::backend::OpenBeneath(m->root_fd, m->rel, O_PATH, 0));
  CheckInside(*root, path, iorelay::backend::OpenBeneathByWalk(m->root_fd, m->rel, O_PATH, 0));
  return 0;
}
