// iorelay-ctl's admin commands (client/ctl_admin.h).
#include "client/ctl_admin.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/key_id.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace iorelay::client {
namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitRefused = 3;

int Usage(const std::string& message) {
  std::fprintf(stderr, "iorelay-ctl: %s\n", message.c_str());
  return kExitUsage;
}

uint64_t LeaseMs(double s) { return static_cast<uint64_t>(std::llround(s * 1000)); }

// Sends `op` with `fields`; on success leaves the reply's payload in `*payload`. Prints a
// refusal with the daemon's reason (the reply's payload) and returns the exit status.
int Call(Connection& conn, proto::Op op, const std::vector<uint8_t>& fields, const char* what,
         std::vector<uint8_t>* payload) {
  Result<ReplyInfo> r = conn.RoundTrip(op, fields, {}, payload, {});
  if (!r.ok()) {
    std::fprintf(stderr, "iorelay-ctl: %s: %s\n", what, r.status().ToString().c_str());
    return kExitFailed;
  }
  if (r->status != 0) {
    const std::string why(payload->begin(), payload->end());
    std::fprintf(stderr, "iorelay-ctl: %s refused: %s%s%s\n", what,
                 Status::FromErrno(r->status, "").ToString().c_str(), why.empty() ? "" : ": ",
                 why.c_str());
    return r->status == EACCES ? kExitRefused : kExitFailed;
  }
  return 0;
}

}  // namespace

void AddAdminOptions(cli::OptionTable* t, AdminOptions* o) {
  t->Add(cli::Text("job-secret-file", "FILE", &o->job_secret_file,
                   "admit: the job's credential (mode 0600; sent wrapped under the\n"
                   "admin credential, never in clear)"))
      .Add(cli::TextList("root", "PREFIX=DIR", &o->roots, nullptr,
                         "admit: client paths under PREFIX map beneath DIR (repeatable)"))
      .Add(cli::Integer("weight", "N", &o->weight, 1, 1'000'000,
                        "admit: the job's scheduler weight (1)"))
      .Add(cli::Seconds("lease", "SECONDS", &o->lease_s,
                        "admit: revoked unless renewed within this (0: no lease);\n"
                        "renew: the new length (0: the admitted one)"))
      .Add(cli::Integer("max-open-files", "N", &o->max_open_files, 0, 1 << 24,
                        "admit: files the job may hold open (0: the daemon's default)"))
      .Add(cli::Integer("max-locks", "N", &o->max_locks, 0, 1 << 30,
                        "admit: lock ranges the job may hold (0: the daemon's default)"))
      .Add(cli::Integer("max-connections", "N", &o->max_connections, 0, 1'000'000,
                        "admit: the job's connections (0: the daemon's default)"))
      .Add(cli::Bytes("max-inflight-bytes", "SIZE", &o->max_inflight_bytes,
                      "admit: the job's data in flight (0: the daemon's default)"));
}

bool IsAdminCommand(const std::string& cmd) {
  return cmd == "admit" || cmd == "revoke" || cmd == "renew" || cmd == "release" || cmd == "jobs";
}

int RunAdminCommand(const std::string& cmd, const std::vector<std::string>& args, Connection& conn,
                    const Secret& admin, const AdminOptions& o) {
  std::vector<uint8_t> payload;
  if (cmd == "jobs") {
    if (!args.empty()) return Usage("jobs takes no job name");
    int rc = Call(conn, proto::Op::kJobs, proto::EncodeFields(proto::Empty{}), "jobs", &payload);
    if (rc == 0) std::printf("%.*s\n", static_cast<int>(payload.size()), payload.data());
    return rc;
  }
  if (cmd == "renew" && args.size() <= 1) {
    // Without a name: the job of --secret-file renews its own lease.
    proto::RenewRequest m{args.empty() ? std::string() : args[0], LeaseMs(o.lease_s)};
    int rc = Call(conn, proto::Op::kRenew, proto::EncodeFields(m), "renew", &payload);
    proto::RenewReply reply;
    if (rc == 0 && proto::DecodeFields(payload, &reply).ok()) {
      std::printf("%s\n", nlohmann::json{{"lease_ms", reply.lease_ms}}.dump().c_str());
    }
    return rc;
  }
  if (args.size() != 1) return Usage(cmd + " takes one job name");
  const std::string& job = args[0];
  if (cmd == "admit") {
    if (o.job_secret_file.empty()) return Usage("admit needs --job-secret-file");
    if (o.roots.empty()) return Usage("admit needs at least one --root PREFIX=DIR");
    Result<Secret> secret = LoadSecretFile(o.job_secret_file);
    if (!secret.ok()) return Usage(secret.status().ToString());
    proto::AdmitRequest m;
    m.job = job;
    m.wrap_nonce = RandomNonce();
    m.wrapped_secret = WrapSecret(admin, m.wrap_nonce, *secret);
    m.roots = o.roots;
    m.weight = o.weight;
    m.lease_ms = LeaseMs(o.lease_s);
    m.max_open_files = o.max_open_files;
    m.max_locks = o.max_locks;
    m.max_connections = o.max_connections;
    m.max_inflight_bytes = o.max_inflight_bytes;
    int rc = Call(conn, proto::Op::kAdmit, proto::EncodeFields(m), "admit", &payload);
    proto::AdmitReply reply;
    if (rc == 0 && proto::DecodeFields(payload, &reply).ok()) {
      std::printf("%s\n", nlohmann::json{{"job", job}, {"app", reply.app}}.dump().c_str());
    }
    return rc;
  }
  const proto::Op op = cmd == "revoke" ? proto::Op::kRevoke : proto::Op::kRelease;
  return Call(conn, op, proto::EncodeFields(proto::JobRequest{job}), cmd.c_str(), &payload);
}

}  // namespace iorelay::client
