#include "daemon/fd_budget.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>

namespace iorelay::daemon {
namespace {

constexpr uint64_t kMinReserve = 256;

uint64_t SoftNofile() {
  struct rlimit rl = {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  return rl.rlim_cur == RLIM_INFINITY ? 0 : rl.rlim_cur;
}

}  // namespace

uint64_t FdBudget::ReserveOf(uint64_t nofile) {
  return std::min(std::max(kMinReserve, nofile / 10), nofile / 2);
}

void FdBudget::SetLimit(uint64_t nofile) {
  if (nofile == 0) nofile = SoftNofile();
  if (nofile == 0) {
    file_limit_ = session_limit_ = 0;
    return;
  }
  file_limit_ = nofile - ReserveOf(nofile);
  session_limit_ = file_limit_ - std::min(ReserveOf(nofile), file_limit_ / 2);
}

bool FdBudget::Take() {
  const uint64_t had = files_.fetch_add(1, std::memory_order_relaxed);
  if (file_limit_ == 0 || had < file_limit_) return true;
  files_.fetch_sub(1, std::memory_order_relaxed);
  return false;
}

NofileLimits RaiseNofileLimit() {
  NofileLimits out;
  struct rlimit rl = {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return out;
  out.before = out.after = rl.rlim_cur;
  out.hard = rl.rlim_max;
  rlim_t want = rl.rlim_max;
  if (want == RLIM_INFINITY) {  // (the kernel refuses more than fs.nr_open)
    uint64_t nr_open = 0;
    std::ifstream("/proc/sys/fs/nr_open") >> nr_open;
    want = nr_open > 0 ? nr_open : rl.rlim_cur;
  }
  if (want > rl.rlim_cur) {
    rl.rlim_cur = want;
    if (::setrlimit(RLIMIT_NOFILE, &rl) == 0) out.after = want;
  }
  return out;
}

}  // namespace iorelay::daemon
