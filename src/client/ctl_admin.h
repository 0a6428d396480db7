// iorelay-ctl's admin commands (admit, revoke, renew, release, jobs): requests of the admin
// channel (docs/security.md), made on a connection authenticated with the admin credential.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/connection.h"
#include "common/auth.h"
#include "common/option_table.h"

namespace iorelay::client {

struct AdminOptions {
  std::string job_secret_file;     // admit: the job's credential (read here, sent wrapped)
  std::vector<std::string> roots;  // admit: PREFIX=DIR
  uint32_t weight = 1;
  double lease_s = 0;  // admit, renew: 0 = none (admit) or the admitted length (renew)
  uint32_t max_open_files = 0;
  uint32_t max_locks = 0;
  uint32_t max_connections = 0;
  uint64_t max_inflight_bytes = 0;
};

// Adds the admin commands' options to iorelay-ctl's table.
void AddAdminOptions(cli::OptionTable* t, AdminOptions* o);

bool IsAdminCommand(const std::string& cmd);

// Runs `cmd` on `conn` (authenticated with `admin`); `args` are the command's positionals after
// the address (the job's name). Prints the result (jobs: JSON) to stdout, a refusal with the
// daemon's reason to stderr. Returns iorelay-ctl's exit status: 0, 1 failed, 2 usage, 3 refused.
int RunAdminCommand(const std::string& cmd, const std::vector<std::string>& args, Connection& conn,
                    const Secret& admin, const AdminOptions& o);

}  // namespace iorelay::client
