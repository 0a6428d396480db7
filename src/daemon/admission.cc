// Admissions (daemon/admission.h): the checks on secrets and roots, then the job table.
#include "daemon/admission.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace iorelay::daemon {
namespace {

// Whether `a` is `b` or lies beneath it (both canonical absolute paths).
bool Beneath(const std::string& a, const std::string& b) {
  if (b == "/") return true;
  return a.compare(0, b.size(), b) == 0 && (a.size() == b.size() || a[b.size()] == '/');
}

std::string Canonical(const std::string& dir) {
  char buf[PATH_MAX];
  if (::realpath(dir.c_str(), buf) == nullptr) return "";
  return buf;
}

std::string WithoutTrailingSlashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// Opens one admitted root: an absolute directory named by its canonical path (no symlink, no
// "." or ".." on the way), owned by the daemon's user. Its descriptor, or the refusal.
Result<int> OpenRoot(const std::string& dir) {
  if (dir.empty() || dir[0] != '/') {
    return Status::InvalidArgument("root '" + dir + "' is not an absolute path");
  }
  const std::string canonical = Canonical(dir);
  if (canonical.empty()) return Status::LastError("root " + dir);
  if (canonical != dir) {
    return Status::PermissionDenied("root " + dir + " is reached through a symlink (or . or ..): " +
                                    "give its real path " + canonical);
  }
  // O_NOFOLLOW: the last component may not have become a symlink since.
  const int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Status::LastError("root " + dir + " (must be a directory)");
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid()) {
    ::close(fd);
    return Status::PermissionDenied("root " + dir + " is not owned by the daemon's user (uid " +
                                    std::to_string(::geteuid()) + ")");
  }
  // The directory opened is the one checked: its path, as the kernel names it, is the same.
  char buf[PATH_MAX];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n > 0 && std::string(buf, static_cast<size_t>(n)) != dir) {
    ::close(fd);
    return Status::PermissionDenied("root " + dir + " changed while it was being admitted");
  }
  return fd;
}

}  // namespace

Status FitConnectionsToNofile(Config* config) {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return Status::LastError("getrlimit(RLIMIT_NOFILE)");
  const uint64_t soft = rl.rlim_cur == RLIM_INFINITY ? 1u << 30 : rl.rlim_cur;
  const int bound = static_cast<int>(std::clamp<uint64_t>(soft / 4, 1, 1'000'000));
  if (config->max_connections == 0) {
    config->max_connections = bound;
  } else if (config->max_connections > bound) {
    return Status::InvalidArgument("--max-connections " + std::to_string(config->max_connections) +
                                   " is above what the descriptor limit carries: RLIMIT_NOFILE " +
                                   std::to_string(soft) +
                                   " / 4 descriptors a connection = " + std::to_string(bound) +
                                   " (raise the limit, ulimit -n, or lower the option)");
  }
  return Status::Ok();
}

JobShares DefaultShares(const Config& config) {
  JobShares s;
  // Half of the daemon's connections and of its lock table; the open files are set by
  // Daemon::Start, once the descriptors set aside for clients' files are known (half of them too).
  s.max_connections = static_cast<uint64_t>(std::max(1, config.max_connections / 2));
  s.max_inflight_bytes = config.max_app_inflight_bytes;
  s.max_locks = kMaxLockSpans / 2;  // half of the lock table (lock_service.h)
  return s;
}

Status AdmitStartJobs(Core& core) {
  const Config& config = core.config;
  std::vector<std::pair<std::string, std::string>> roots;
  if (config.role != Role::kRelay) {
    for (const auto& [prefix, root] : config.exports) {
      roots.emplace_back(WithoutTrailingSlashes(prefix), Canonical(root));
    }
  }
  const int64_t now = core.clock.NowNs();
  for (const auto& [name, file, weight] : config.credentials) {
    Result<Secret> secret = LoadSecretFile(file);
    if (!secret.ok()) {
      return Status::FromErrno(secret.status().code(), "--credential " + name + "=" + file + ": " +
                                                           secret.status().message());
    }
    Job::Spec spec;
    spec.name = name;
    spec.secret = *secret;
    spec.at_start = true;
    spec.exports = core.start_exports;
    spec.roots = roots;
    spec.weight = weight;
    // The operator's own jobs share the daemon as before: bounded per session and daemon-wide.
    spec.shares.max_inflight_bytes = config.max_app_inflight_bytes;
    const std::string& app_name = name;  // (clang 14 cannot capture a structured binding)
    Result<JobPtr> job = core.jobs.Admit(
        std::move(spec), [&](uint32_t app) { return core.stats->AddApp(app, app_name); }, now);
    if (!job.ok()) {
      return Status::InvalidArgument("--credential " + name + ": " + job.status().message());
    }
  }
  if (!config.admin_credential.empty()) {
    // (LoadSecretFile refuses a file that group or others may read or write.)
    Result<Secret> secret = LoadSecretFile(config.admin_credential);
    if (!secret.ok()) {
      return Status::FromErrno(
          secret.status().code(),
          "--admin-credential " + config.admin_credential + ": " + secret.status().message());
    }
    Job::Spec spec;
    spec.name = "(admin)";
    spec.secret = *secret;
    spec.admin = true;
    spec.at_start = true;
    spec.exports = std::make_shared<Exports>();  // no roots: admin ops only
    // Its requests are counted apart from the jobs' statistics.
    Result<JobPtr> job = core.jobs.Admit(
        std::move(spec), [](uint32_t) { return std::make_shared<AppStats>("(admin)"); }, now);
    if (!job.ok()) {
      return Status::InvalidArgument("--admin-credential: " + job.status().message());
    }
  }
  return Status::Ok();
}

Result<JobPtr> AdmitJob(Core& core, AdmitSpec spec) {
  if (core.config.role == Role::kRelay) {
    return Status::FromErrno(ENOTSUP, "a relay serves its one job only");
  }
  if (spec.name.empty() || spec.name.size() > 255 || spec.name[0] == '(') {
    return Status::InvalidArgument("a job name is 1 to 255 bytes, not starting with '('");
  }
  if (spec.roots.empty()) return Status::InvalidArgument("job " + spec.name + ": no root given");
  if (spec.weight < 1 || spec.weight > 1'000'000) {
    return Status::InvalidArgument("weight wants an integer in [1, 1000000]");
  }
  // (The table checks both again when it admits; here, before any root is looked at, so that
  // the refusal names the first thing wrong.)
  if (core.jobs.Find(spec.name) != nullptr) {
    return Status::FromErrno(EEXIST, "job '" + spec.name + "' is already admitted");
  }
  if (JobPtr same = core.jobs.FindByKey(KeyIdOf(spec.secret)); same != nullptr) {
    return Status::FromErrno(EEXIST, "job '" + spec.name + "': its credential is job '" +
                                         same->name() + "''s already (one credential per job)");
  }
  auto exports = std::make_shared<Exports>();
  std::vector<std::pair<std::string, std::string>> roots;
  const std::vector<std::pair<std::string, std::string>> taken = core.jobs.RootDirs();
  for (const std::string& r : spec.roots) {
    const size_t eq = r.find('=');
    if (eq == std::string::npos || eq == 0 || r[0] != '/') {
      return Status::InvalidArgument("root '" + r + "' wants PREFIX=DIR, PREFIX absolute");
    }
    const std::string prefix = WithoutTrailingSlashes(r.substr(0, eq));
    const std::string dir = WithoutTrailingSlashes(r.substr(eq + 1));
    Result<int> fd = OpenRoot(dir);
    if (!fd.ok()) return fd.status();
    // Apart from every other job's roots: neither beneath nor above one, so that no path of this
    // job names another's file (a start-time job's --export roots included).
    for (const auto& [other, other_dir] : taken) {
      if (!other_dir.empty() && (Beneath(dir, other_dir) || Beneath(other_dir, dir))) {
        ::close(*fd);
        return Status::PermissionDenied("root " + dir + " overlaps job " + other + "'s root " +
                                        other_dir);
      }
    }
    for (const auto& [p, d] : roots) {
      if (p == prefix) {
        ::close(*fd);
        return Status::InvalidArgument("prefix " + prefix + " given twice");
      }
    }
    Status s = exports->AddOpened(prefix, *fd);
    if (!s.ok()) return s;
    roots.emplace_back(prefix, dir);
  }
  Job::Spec job;
  job.name = spec.name;
  job.secret = spec.secret;
  job.exports = std::move(exports);
  job.roots = std::move(roots);
  job.weight = spec.weight;
  job.lease_ns = spec.lease_ns;
  const JobShares& d = core.default_shares;
  job.shares.max_open_files =
      spec.shares.max_open_files ? spec.shares.max_open_files : d.max_open_files;
  job.shares.max_locks = spec.shares.max_locks ? spec.shares.max_locks : d.max_locks;
  job.shares.max_connections =
      spec.shares.max_connections ? spec.shares.max_connections : d.max_connections;
  job.shares.max_inflight_bytes =
      spec.shares.max_inflight_bytes ? spec.shares.max_inflight_bytes : d.max_inflight_bytes;
  const std::string name = spec.name;
  Result<JobPtr> admitted = core.jobs.Admit(
      std::move(job), [&](uint32_t app) { return core.stats->AddApp(app, name); },
      core.clock.NowNs());
  if (!admitted.ok()) return admitted.status();
  core.dispatcher->AddApp((*admitted)->app(), (*admitted)->spec().weight);
  return admitted;
}

}  // namespace iorelay::daemon
