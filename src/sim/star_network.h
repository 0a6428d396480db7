// The simulated machine's hosts and links on SimGrid: compute nodes, I/O nodes and storage servers
// in one star zone (each host's NIC a split-duplex link to a switch, optionally behind a shared
// backbone link), built in code from a Platform.
#pragma once

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <vector>

#include "sim/platform.h"

namespace iorelay::sim {

struct Hosts {
  std::vector<simgrid::s4u::Host*> compute;  // "c<i>"
  std::vector<simgrid::s4u::Host*> ionodes;  // "io<k>"
  std::vector<simgrid::s4u::Host*> storage;  // "st<j>", one per data target
};

// Creates the zone under the engine's (not yet created) root and seals it. Call once, after the
// engine exists and before it runs.
Hosts BuildStarNetwork(const Platform& platform, int compute_nodes, int ionodes);

}  // namespace iorelay::sim
