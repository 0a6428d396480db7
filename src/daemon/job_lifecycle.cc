// Revocation, lease expiry and release of jobs (daemon/job_lifecycle.h).
#include "daemon/job_lifecycle.h"

#include <fmt/core.h>

#include <thread>

namespace iorelay::daemon {
namespace {

// The job is out of the table: its counters are listed once more, then dropped; the scheduler
// drops its weight (and its queue, once served).
void Depart(Core& core, const Job& job, const char* why) {
  core.stats->DepartApp(job.app());
  core.dispatcher->RemoveApp(job.app());
  fmt::print(stderr, "iorelayd: job {} (app {}) {}\n", job.name(), job.app(), why);
}

}  // namespace

Status RevokeJob(Core& core, const std::string& name) {
  Result<JobPtr> job = core.jobs.Revoke(name);
  if (!job.ok()) return job.status();
  Depart(core, **job, "revoked");
  return Status::Ok();
}

void RevokeExpiredJobs(Core& core) {
  for (const JobPtr& job : core.jobs.RevokeExpired(core.clock.NowNs())) {
    Depart(core, *job, "revoked: its lease ran out");
  }
}

Status ReleaseJob(Core& core, const std::string& name, std::chrono::milliseconds timeout) {
  Result<JobPtr> job = core.jobs.BeginRelease(name);
  if (!job.ok()) return job.status();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // The event loops close each of its connections once idle (JobEndsConnection).
  while ((*job)->connections() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      (void)core.jobs.Revoke(name);
      Depart(core, **job, "revoked: its release did not drain in time");
      return Status::FromErrno(ETIMEDOUT, "job " + name + " did not drain within " +
                                              std::to_string(timeout.count()) +
                                              " ms: revoked instead");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  core.jobs.Remove(*job);
  Depart(core, **job, "released");
  return Status::Ok();
}

bool JobEndsConnection(ClientConn& conn, bool keep_offset_files) {
  const Job& job = conn.session->job();
  switch (job.state()) {
    case JobState::kActive:
      return false;
    case JobState::kRevoked:
      return true;
    case JobState::kReleasing:
      return conn.outstanding.load(std::memory_order_acquire) == 0 && conn.queued_bytes() == 0 &&
             !ReleaseServesConnection(conn, keep_offset_files);
  }
  return true;
}

bool ReleaseServesConnection(ClientConn& conn, bool keep_offset_files) {
  return keep_offset_files && conn.session->job().state() == JobState::kReleasing &&
         conn.session->HoldsDaemonOffsetFile();
}

}  // namespace iorelay::daemon
