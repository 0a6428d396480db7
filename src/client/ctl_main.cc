// iorelay-ctl: talks to one daemon for operators and the Python CLI (`iorelay stats`).
// Exit codes: 0 success, 1 daemon unreachable or failed, 2 usage or configuration, 3 refused.
// Options come from its option table (common/option_table.h).
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "client/connection.h"
#include "client/ctl_admin.h"
#include "client/env_table.h"
#include "common/auth.h"
#include "common/option_table.h"
#include "common/version_flag.h"
#include "proto/wire.h"

namespace {

using iorelay::Result;
using iorelay::client::Connection;

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitRefused = 3;

struct CtlOptions {
  std::string secret_file;  // the job credential, or the admin credential for admin commands
  int timeout_ms = 5000;    // bounds every wait
  iorelay::client::AdminOptions admin;
};

// The table binds to `o`; the environment gives the defaults the command line overrides.
iorelay::cli::OptionTable Table(CtlOptions* o) {
  iorelay::cli::OptionTable t(
      "usage: iorelay-ctl [options] stats ADDRESS   print the daemon's counters as JSON\n"
      "       iorelay-ctl [options] ping ADDRESS    check that the daemon answers\n"
      "       iorelay-ctl env                       list the client's environment variables\n"
      "Admin commands (--secret-file is the daemon's admin credential; docs/security.md):\n"
      "       iorelay-ctl [options] admit ADDRESS JOB --job-secret-file FILE --root PREFIX=DIR\n"
      "       iorelay-ctl [options] renew|release|revoke ADDRESS JOB\n"
      "       iorelay-ctl [options] renew ADDRESS   (a job's credential: its own lease)\n"
      "       iorelay-ctl [options] jobs ADDRESS    the admitted jobs as JSON\n"
      "ADDRESS is tcp:HOST:PORT or unix:PATH.\n",
      "Exit status: 0 ok, 1 daemon unreachable or failed, 2 usage or configuration, 3 refused.\n");
  t.Add(iorelay::cli::Text("secret-file", "FILE", &o->secret_file,
                           "the job credential (default: $IORELAY_SECRET_FILE)"))
      .Add(iorelay::cli::Integer("timeout-ms", "N", &o->timeout_ms, 1, 3'600'000,
                                 "bounds every wait (default: $IORELAY_TIMEOUT_MS or 5000)"));
  iorelay::client::AddAdminOptions(&t, &o->admin);
  return t;
}

int UsageError(const std::string& message) {
  CtlOptions o;
  std::fprintf(stderr, "iorelay-ctl: %s\n%s", message.c_str(), Table(&o).Help().c_str());
  return kExitUsage;
}

double NowUs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  if (iorelay::PrintVersionIfAsked(argc, argv, "iorelay-ctl")) return 0;
  CtlOptions o;
  using iorelay::client::EnvVarId;
  using iorelay::client::ReadEnv;
  if (const char* f = ReadEnv(EnvVarId::kSecretFile)) o.secret_file = f;
  if (const char* t = ReadEnv(EnvVarId::kTimeoutMs); t && std::atoi(t) > 0) {
    o.timeout_ms = std::atoi(t);
  }
  iorelay::cli::OptionTable table = Table(&o);
  Result<iorelay::cli::ParseOutcome> parsed = table.Parse(argc, argv, 3);
  if (!parsed.ok()) return UsageError(parsed.status().message());
  if (parsed->help) {
    std::fputs(table.Help().c_str(), stdout);
    return 0;
  }
  if (parsed->print_config) {
    std::printf("%s\n", table.ToJson().dump(2).c_str());
    return 0;
  }
  if (parsed->positionals.size() == 1 && parsed->positionals[0] == "env") {
    std::fputs(iorelay::client::EnvListing().c_str(), stdout);
    return 0;
  }
  if (parsed->positionals.size() < 2) return UsageError("give a command and an address");
  const std::string cmd = parsed->positionals[0];
  const std::string address = parsed->positionals[1];
  const bool admin = iorelay::client::IsAdminCommand(cmd);
  if (cmd != "stats" && cmd != "ping" && !admin) {
    return UsageError("unknown command '" + cmd + "'");
  }
  if (!admin && parsed->positionals.size() != 2) return UsageError(cmd + " takes an address");
  Result<iorelay::client::Address> addr = iorelay::client::ParseAddress(address);
  if (!addr.ok()) {
    std::fprintf(stderr, "iorelay-ctl: %s\n", addr.status().message().c_str());
    return kExitUsage;
  }
  if (o.secret_file.empty()) {
    std::fprintf(stderr,
                 "iorelay-ctl: no credential: give --secret-file or set IORELAY_SECRET_FILE\n");
    return kExitUsage;
  }
  Result<iorelay::Secret> secret = iorelay::LoadSecretFile(o.secret_file);
  if (!secret.ok()) {
    std::fprintf(stderr, "iorelay-ctl: %s\n", secret.status().ToString().c_str());
    return kExitUsage;
  }
  const int timeout_ms = o.timeout_ms;
  iorelay::client::Identity who{static_cast<uint32_t>(getpid()), 0, "iorelay-ctl"};
  double t0 = NowUs();
  Result<std::unique_ptr<Connection>> conn =
      Connection::Open(*addr, *secret, who, 0, 0, timeout_ms);
  if (!conn.ok()) {
    bool unreachable = conn.status().code() == EIO;  // the message already says why
    std::fprintf(stderr, "iorelay-ctl: %s\n",
                 unreachable ? conn.status().message().c_str() : conn.status().ToString().c_str());
    return unreachable ? kExitFailed : kExitRefused;
  }
  double t1 = NowUs();
  if (admin) {
    const std::vector<std::string> args(parsed->positionals.begin() + 2, parsed->positionals.end());
    return iorelay::client::RunAdminCommand(cmd, args, **conn, *secret, o.admin);
  }
  std::vector<uint8_t> payload;
  auto op = cmd == "stats" ? iorelay::proto::Op::kStats : iorelay::proto::Op::kPing;
  Result<iorelay::client::ReplyInfo> r = (*conn)->RoundTrip(op, {}, {}, &payload, {});
  double t2 = NowUs();
  if (!r.ok() || r->status != 0) {
    iorelay::Status s = r.ok() ? iorelay::Status::FromErrno(r->status, "") : r.status();
    std::fprintf(stderr, "iorelay-ctl: %s %s: %s\n", cmd.c_str(), address.c_str(),
                 s.ToString().c_str());
    return kExitFailed;
  }
  if (cmd == "stats") {
    std::fwrite(payload.data(), 1, payload.size(), stdout);
    std::fputc('\n', stdout);
  } else {
    const auto& s = (*conn)->session();
    std::printf("%s: ok (app %s, session %llu, connect+auth %.0f us, ping %.0f us)\n",
                address.c_str(), s.app.c_str(), static_cast<unsigned long long>(s.session), t1 - t0,
                t2 - t1);
  }
  return 0;
}
