// The jobs a daemon serves, a table that changes while it runs: each job has its credential
// (found by key id at authentication), the roots it may reach, its scheduler weight, its lease
// and its shares of the daemon's resources. Jobs given on the command line are admitted at
// start; the admin channel admits, renews, releases and revokes the others (admin_ops.cc).
// Application ids are never reused: a session joined or adopted from names its job by id.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/auth.h"
#include "common/key_id.h"
#include "common/mutex.h"
#include "common/status.h"
#include "daemon/exports.h"

namespace iorelay::daemon {

struct AppStats;

// A job's shares of daemon-wide resources (docs/security.md, "Shares"); hitting one gives that
// job the error, never another job.
struct JobShares {
  uint64_t max_open_files = 0;      // files its sessions hold together (EMFILE beyond)
  uint64_t max_locks = 0;           // lock spans its sessions hold together (ENOLCK beyond)
  uint64_t max_connections = 0;     // its connections (refused at authentication beyond)
  uint64_t max_inflight_bytes = 0;  // data in flight over its connections (not read beyond)
};

enum class JobState : uint8_t {
  kActive,
  kReleasing,  // draining: no new connection or request; removed once drained
  kRevoked,    // refused from now on; its connections close, its queued writes are dropped
};

const char* JobStateName(JobState s);

class Job {
 public:
  struct Spec {
    std::string name;
    Secret secret{};
    bool admin = false;  // the admin credential: admin ops only, no roots
    bool at_start = false;
    std::shared_ptr<const Exports> exports;  // never null (empty for the admin)
    // (client prefix, directory): what `exports` was made of, for listings and the overlap
    // check at admission.
    std::vector<std::pair<std::string, std::string>> roots;
    uint32_t weight = 1;
    int64_t lease_ns = 0;  // 0: no lease
    JobShares shares;
  };
  Job(uint32_t app, Spec spec, std::shared_ptr<AppStats> stats, int64_t now_ns);

  uint32_t app() const { return app_; }
  const std::string& name() const { return spec_.name; }
  const Secret& secret() const { return spec_.secret; }
  const KeyId& key_id() const { return key_id_; }
  bool admin() const { return spec_.admin; }
  const Exports& exports() const { return *spec_.exports; }
  const JobShares& shares() const { return spec_.shares; }
  const Spec& spec() const { return spec_; }
  AppStats* stats() const { return stats_.get(); }

  JobState state() const { return state_.load(std::memory_order_acquire); }
  bool revoked() const { return state() == JobState::kRevoked; }
  // Whether its credential is accepted: active only.
  bool accepting() const { return state() == JobState::kActive; }
  // Whether the lease ran out at `now_ns` (never without a lease).
  bool Expired(int64_t now_ns) const;
  int64_t lease_deadline_ns() const { return lease_deadline_ns_.load(std::memory_order_acquire); }

  // Share counters, taken and given back by the sessions of the job (any thread). Take* is
  // false, nothing taken, when the share is used up.
  bool TakeConnection();
  void GiveConnection() { connections_.fetch_sub(1, std::memory_order_relaxed); }
  bool TakeFile();
  void GiveFile() { files_.fetch_sub(1, std::memory_order_relaxed); }
  uint64_t connections() const { return connections_.load(std::memory_order_relaxed); }
  uint64_t files() const { return files_.load(std::memory_order_relaxed); }

  // Queued writes dropped because the job was revoked.
  std::atomic<uint64_t> revoked_writes{0};

 private:
  friend class JobTable;
  const uint32_t app_;
  const Spec spec_;
  const KeyId key_id_;
  const std::shared_ptr<AppStats> stats_;
  std::atomic<JobState> state_{JobState::kActive};
  std::atomic<int64_t> lease_deadline_ns_{0};  // 0: no lease
  std::atomic<uint64_t> connections_{0};
  std::atomic<uint64_t> files_{0};
};

using JobPtr = std::shared_ptr<Job>;

// Thread-safe. Policy only: no OS calls (roots are opened and checked by admission.cc).
class JobTable {
 public:
  // Adds a job under the next application id. EEXIST when its name or its credential (key id)
  // is already a job's, a revoked one's included while it is in the table.
  // `make_stats` makes the job's counters for its application id (called under the table's
  // lock).
  Result<JobPtr> Admit(Job::Spec spec,
                       const std::function<std::shared_ptr<AppStats>(uint32_t app)>& make_stats,
                       int64_t now_ns);
  // The job whose credential has `key_id`, or null.
  JobPtr FindByKey(const KeyId& key_id) const;
  // The job named `name`, or null.
  JobPtr Find(const std::string& name) const;
  // Marks the job revoked and takes it out of the table (its credential is refused from now
  // on). ENOENT for an unknown job; EINVAL for the admin credential.
  Result<JobPtr> Revoke(const std::string& name);
  // Marks the job releasing (no new connection); Remove takes it out once drained.
  Result<JobPtr> BeginRelease(const std::string& name);
  void Remove(const JobPtr& job);
  // The lease runs `lease_ns` from `now_ns` (0: the length given at admission); returns the
  // length used. ENOENT for an unknown job, EINVAL for a job without a lease given none.
  Result<int64_t> Renew(const std::string& name, int64_t lease_ns, int64_t now_ns);
  // Revokes every job whose lease ran out at `now_ns`; returns them.
  std::vector<JobPtr> RevokeExpired(int64_t now_ns);
  // Every job in the table, by application id.
  std::vector<JobPtr> All() const;
  // The root directories of every job in the table, with its name (the overlap check at
  // admission).
  std::vector<std::pair<std::string, std::string>> RootDirs() const;

 private:
  mutable Mutex mu_;
  std::map<uint32_t, JobPtr> by_app_ GUARDED_BY(mu_);
  uint32_t next_app_ GUARDED_BY(mu_) = 0;  // never goes back
};

// A job's listing for kJobs: name, app, state, roots, weight, lease_ms_left, shares and use.
nlohmann::json JobJson(const Job& job, int64_t now_ns);

}  // namespace iorelay::daemon
