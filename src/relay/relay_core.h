// Assembles a relay (iorelayd --role relay): the daemon core with a RelayBackend and a
// LockRelay, both iorelay clients of the --upstream daemons under the job's credential.
#pragma once

#include <memory>

#include "client/config.h"
#include "daemon/config.h"
#include "daemon/core.h"

namespace iorelay::relay {

// The upstream client's configuration: --upstream as the servers, the one --credential's file
// as the secret, the export roots as the prefixes, file-hash placement (every relay sends a
// file to the same I/O node, whose scheduler can merge the nodes' requests further).
// EINVAL naming the option when the relay is not configured as one.
Result<client::ClientConfig> UpstreamConfig(const daemon::Config& config);

// daemon::BuildCore for --role relay.
Result<std::unique_ptr<daemon::Core>> BuildRelayCore(const daemon::Config& config);

}  // namespace iorelay::relay
