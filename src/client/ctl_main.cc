// iorelay-ctl: talks to one daemon for operators and the Python CLI (`iorelay stats`).
// Exit codes: 0 success, 1 daemon unreachable or failed, 2 usage or configuration, 3 refused.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "client/connection.h"
#include "common/auth.h"
#include "common/version_flag.h"
#include "proto/wire.h"

namespace {

using iorelay::Result;
using iorelay::client::Connection;

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitRefused = 3;

int Usage() {
  std::fprintf(stderr,
               "usage: iorelay-ctl stats ADDRESS   print the daemon's counters as JSON\n"
               "       iorelay-ctl ping ADDRESS    check that the daemon answers\n"
               "ADDRESS is tcp:HOST:PORT or unix:PATH; the credential is read from\n"
               "IORELAY_SECRET_FILE; IORELAY_TIMEOUT_MS bounds every wait (default 5000).\n");
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
  if (argc != 3) return Usage();
  std::string cmd = argv[1];
  if (cmd != "stats" && cmd != "ping") return Usage();
  Result<iorelay::client::Address> addr = iorelay::client::ParseAddress(argv[2]);
  if (!addr.ok()) {
    std::fprintf(stderr, "iorelay-ctl: %s\n", addr.status().message().c_str());
    return kExitUsage;
  }
  const char* secret_file = std::getenv("IORELAY_SECRET_FILE");
  if (!secret_file || !*secret_file) {
    std::fprintf(stderr, "iorelay-ctl: IORELAY_SECRET_FILE is not set (the job credential)\n");
    return kExitUsage;
  }
  Result<iorelay::Secret> secret = iorelay::LoadSecretFile(secret_file);
  if (!secret.ok()) {
    std::fprintf(stderr, "iorelay-ctl: %s\n", secret.status().ToString().c_str());
    return kExitUsage;
  }
  int timeout_ms = 5000;
  if (const char* t = std::getenv("IORELAY_TIMEOUT_MS"); t && std::atoi(t) > 0) {
    timeout_ms = std::atoi(t);
  }
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
  std::vector<uint8_t> payload;
  auto op = cmd == "stats" ? iorelay::proto::Op::kStats : iorelay::proto::Op::kPing;
  Result<iorelay::client::ReplyInfo> r = (*conn)->RoundTrip(op, {}, {}, &payload, {});
  double t2 = NowUs();
  if (!r.ok() || r->status != 0) {
    iorelay::Status s = r.ok() ? iorelay::Status::FromErrno(r->status, "") : r.status();
    std::fprintf(stderr, "iorelay-ctl: %s %s: %s\n", cmd.c_str(), argv[2], s.ToString().c_str());
    return kExitFailed;
  }
  if (cmd == "stats") {
    std::fwrite(payload.data(), 1, payload.size(), stdout);
    std::fputc('\n', stdout);
  } else {
    const auto& s = (*conn)->session();
    std::printf("%s: ok (app %s, session %llu, connect+auth %.0f us, ping %.0f us)\n", argv[2],
                s.app.c_str(), static_cast<unsigned long long>(s.session), t1 - t0, t2 - t1);
  }
  return 0;
}
