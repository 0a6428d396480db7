// The job table (daemon/jobs.h).
#include "daemon/jobs.h"

#include <sodium.h>

#include "daemon/stats.h"

namespace iorelay::daemon {

const char* JobStateName(JobState s) {
  switch (s) {
    case JobState::kActive:
      return "active";
    case JobState::kReleasing:
      return "releasing";
    case JobState::kRevoked:
      return "revoked";
  }
  return "unknown";
}

Job::Job(uint32_t app, Spec spec, std::shared_ptr<AppStats> stats, int64_t now_ns)
    : app_(app), spec_(std::move(spec)), key_id_(KeyIdOf(spec_.secret)), stats_(std::move(stats)) {
  if (spec_.lease_ns > 0) lease_deadline_ns_.store(now_ns + spec_.lease_ns);
}

bool Job::Expired(int64_t now_ns) const {
  const int64_t deadline = lease_deadline_ns();
  return deadline != 0 && now_ns >= deadline;
}

namespace {

// Takes one of `share` (0: unbounded) from `used`.
bool TakeOne(std::atomic<uint64_t>& used, uint64_t share) {
  const uint64_t before = used.fetch_add(1, std::memory_order_relaxed);
  if (share != 0 && before >= share) {
    used.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

bool SameKey(const KeyId& a, const KeyId& b) {
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

bool Job::TakeConnection() { return TakeOne(connections_, spec_.shares.max_connections); }
bool Job::TakeFile() { return TakeOne(files_, spec_.shares.max_open_files); }

Result<JobPtr> JobTable::Admit(
    Job::Spec spec, const std::function<std::shared_ptr<AppStats>(uint32_t app)>& make_stats,
    int64_t now_ns) {
  if (spec.name.empty()) return Status::InvalidArgument("a job needs a name");
  const KeyId key = KeyIdOf(spec.secret);
  MutexLock lock(mu_);
  for (const auto& [app, j] : by_app_) {
    if (j->name() == spec.name) {
      return Status::FromErrno(EEXIST, "job '" + spec.name + "' is already admitted");
    }
    if (SameKey(j->key_id(), key)) {
      return Status::FromErrno(EEXIST, "job '" + spec.name + "': its credential is job '" +
                                           j->name() + "''s already (one credential per job)");
    }
  }
  const uint32_t app = next_app_++;
  auto job = std::make_shared<Job>(app, std::move(spec), make_stats(app), now_ns);
  by_app_[app] = job;
  return job;
}

JobPtr JobTable::FindByKey(const KeyId& key_id) const {
  MutexLock lock(mu_);
  for (const auto& [app, j] : by_app_) {
    if (SameKey(j->key_id(), key_id)) return j;
  }
  return nullptr;
}

JobPtr JobTable::Find(const std::string& name) const {
  MutexLock lock(mu_);
  for (const auto& [app, j] : by_app_) {
    if (j->name() == name) return j;
  }
  return nullptr;
}

Result<JobPtr> JobTable::Revoke(const std::string& name) {
  MutexLock lock(mu_);
  for (auto it = by_app_.begin(); it != by_app_.end(); ++it) {
    JobPtr j = it->second;
    if (j->name() != name) continue;
    if (j->admin()) return Status::InvalidArgument("the admin credential is not a job");
    j->state_.store(JobState::kRevoked, std::memory_order_release);
    by_app_.erase(it);
    return j;
  }
  return Status::FromErrno(ENOENT, "no job '" + name + "'");
}

Result<JobPtr> JobTable::BeginRelease(const std::string& name) {
  MutexLock lock(mu_);
  for (const auto& [app, j] : by_app_) {
    if (j->name() != name) continue;
    if (j->admin()) return Status::InvalidArgument("the admin credential is not a job");
    JobState expected = JobState::kActive;
    if (!j->state_.compare_exchange_strong(expected, JobState::kReleasing)) {
      return Status::FromErrno(EALREADY, "job '" + name + "' is already being released");
    }
    return j;
  }
  return Status::FromErrno(ENOENT, "no job '" + name + "'");
}

void JobTable::Remove(const JobPtr& job) {
  // Removed from the table, the job's credential is refused like a revoked one's.
  job->state_.store(JobState::kRevoked, std::memory_order_release);
  MutexLock lock(mu_);
  by_app_.erase(job->app());
}

Result<int64_t> JobTable::Renew(const std::string& name, int64_t lease_ns, int64_t now_ns) {
  JobPtr j = Find(name);
  if (j == nullptr || !j->accepting()) return Status::FromErrno(ENOENT, "no job '" + name + "'");
  if (j->spec().lease_ns == 0 && lease_ns == 0) {
    return Status::InvalidArgument("job '" + name + "' has no lease; give its length");
  }
  const int64_t length = lease_ns > 0 ? lease_ns : j->spec().lease_ns;
  j->lease_deadline_ns_.store(now_ns + length, std::memory_order_release);
  return length;
}

std::vector<JobPtr> JobTable::RevokeExpired(int64_t now_ns) {
  std::vector<JobPtr> out;
  MutexLock lock(mu_);
  for (auto it = by_app_.begin(); it != by_app_.end();) {
    if (it->second->Expired(now_ns) && !it->second->admin()) {
      it->second->state_.store(JobState::kRevoked, std::memory_order_release);
      out.push_back(it->second);
      it = by_app_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::vector<JobPtr> JobTable::All() const {
  MutexLock lock(mu_);
  std::vector<JobPtr> out;
  for (const auto& [app, j] : by_app_) out.push_back(j);
  return out;
}

std::vector<std::pair<std::string, std::string>> JobTable::RootDirs() const {
  MutexLock lock(mu_);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [app, j] : by_app_) {
    for (const auto& [prefix, dir] : j->spec().roots) out.emplace_back(j->name(), dir);
  }
  return out;
}

nlohmann::json JobJson(const Job& job, int64_t now_ns) {
  nlohmann::json roots = nlohmann::json::object();
  for (const auto& [prefix, dir] : job.spec().roots) roots[prefix] = dir;
  const int64_t deadline = job.lease_deadline_ns();
  nlohmann::json j{{"name", job.name()},
                   {"app", job.app()},
                   {"key_id", KeyIdText(job.key_id())},
                   {"state", JobStateName(job.state())},
                   {"admitted_at_start", job.spec().at_start},
                   {"roots", roots},
                   {"weight", job.spec().weight},
                   {"lease_ms", job.spec().lease_ns / 1'000'000},
                   {"connections", job.connections()},
                   {"open_files", job.files()},
                   {"revoked_writes", job.revoked_writes.load()}};
  j["lease_ms_left"] = deadline == 0
                           ? nlohmann::json(nullptr)
                           : nlohmann::json(std::max<int64_t>(0, deadline - now_ns) / 1'000'000);
  const JobShares& s = job.shares();
  j["shares"] = {{"max_open_files", s.max_open_files},
                 {"max_locks", s.max_locks},
                 {"max_connections", s.max_connections},
                 {"max_inflight_bytes", s.max_inflight_bytes}};
  return j;
}

}  // namespace iorelay::daemon
