#include "testutil/daemon_dir_testutil.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common/auth.h"

namespace iorelay::testing {

namespace {
[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "test daemon directory: %s\n", what.c_str());
  std::abort();
}
}  // namespace

DaemonDir::DaemonDir(std::vector<std::string> apps) : apps_(std::move(apps)) {
  char tmpl[] = "/tmp/iorelay-test-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) Fail("mkdtemp failed");
  path_ = tmpl;
  if (::mkdir(root().c_str(), 0755) != 0) Fail("cannot make " + root());
  for (const std::string& app : apps_) {
    Status s = CreateSecretFile(key_file(app));
    if (!s.ok()) Fail(s.ToString());
  }
}

DaemonDir::~DaemonDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace iorelay::testing
