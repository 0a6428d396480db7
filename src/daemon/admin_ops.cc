// The admin ops (proto/ops.h, handler kAdmin): admit, revoke, renew, release and list jobs.
// Only a session of the admin credential reaches them (op_table.cc); a refusal carries its
// reason as the reply's tail, for the operator.
#include "daemon/admission.h"
#include "daemon/job_lifecycle.h"
#include "daemon/op_handlers.h"

namespace iorelay::daemon {
namespace {

// One admin op at a time (but release): an admission's overlap check and its entry in the table
// are one step.
Mutex& AdminMutex(Core& core) { return core.admin_mu; }

}  // namespace

Answer<proto::AdmitReply> HandleAdmit(Core& core, Session& s, const proto::AdmitRequest& m) {
  AdmitSpec spec;
  spec.name = m.job;
  spec.secret = UnwrapSecret(s.job().secret(), m.wrap_nonce, m.wrapped_secret);
  spec.roots = m.roots;
  spec.weight = m.weight;
  spec.lease_ns = static_cast<int64_t>(std::min<uint64_t>(m.lease_ms, 1ull << 40)) * 1'000'000;
  spec.shares = JobShares{m.max_open_files, m.max_locks, m.max_connections, m.max_inflight_bytes};
  MutexLock lock(AdminMutex(core));
  Result<JobPtr> job = AdmitJob(core, std::move(spec));
  if (!job.ok()) return Explained(job.status());
  return proto::AdmitReply{(*job)->app()};
}

Answer<proto::Empty> HandleRevoke(Core& core, Session&, const proto::JobRequest& m) {
  MutexLock lock(AdminMutex(core));
  Status st = RevokeJob(core, m.job);
  if (!st.ok()) return Explained(st);
  return proto::Empty{};
}

// (A row of its own, not kAdmin: a job renews its own lease on its own connection.)
Answer<proto::RenewReply> HandleRenew(Core& core, Session& s, const proto::RenewRequest& m) {
  const std::string& job = m.job.empty() ? s.app() : m.job;
  if (!s.job().admin() && job != s.app()) {
    return Explained(Status::PermissionDenied("a job renews its own lease only"));
  }
  // A job renews for the length it was admitted with; only the admin may change it.
  const uint64_t lease_ms = s.job().admin() ? std::min<uint64_t>(m.lease_ms, 1ull << 40) : 0;
  const int64_t lease_ns = static_cast<int64_t>(lease_ms) * 1'000'000;
  Result<int64_t> length = core.jobs.Renew(job, lease_ns, core.clock.NowNs());
  if (!length.ok()) return Explained(length.status());
  return proto::RenewReply{static_cast<uint64_t>(*length / 1'000'000)};
}

Answer<proto::Empty> HandleRelease(Core& core, Session&, const proto::JobRequest& m) {
  // (Not under the admin lock: it waits for the job's connections, and a revoke may come.)
  // (--release-timeout-ms: past it, the job is revoked instead.)
  Status st = ReleaseJob(core, m.job, std::chrono::milliseconds(core.config.release_timeout_ms));
  if (!st.ok()) return Explained(st);
  return proto::Empty{};
}

Answer<proto::Empty> HandleJobs(Core& core, Session&, const proto::Empty&) {
  const int64_t now = core.clock.NowNs();
  nlohmann::json jobs = nlohmann::json::array();
  for (const JobPtr& job : core.jobs.All()) {
    if (job->admin()) continue;
    nlohmann::json j = JobJson(*job, now);
    j["locks"] = core.locks.spans(job->app());  // ranges its sessions hold now
    jobs.push_back(std::move(j));
  }
  return {proto::Empty{}, 0, nlohmann::json{{"jobs", jobs}}.dump()};
}

}  // namespace iorelay::daemon
