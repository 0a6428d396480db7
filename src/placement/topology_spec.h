// Topologies written as strings ("torus:4x4x4x4x2", "fattree:16x32x8", "dragonfly:9x4x2x2"),
// the form the tool's
// --topology flag and the simulator's platform files share.
#pragma once

#include <memory>
#include <string_view>

#include "common/status.h"
#include "placement/topology.h"

namespace iorelay::placement {

// Accepted forms (case-sensitive, no spaces):
//   torus:D0xD1x...xDn[:order=LETTERS]   ring sizes; routing order as dimension letters,
//                                         A = first dimension (default ABC... in order)
//   fattree:LxPxU                         L leaf switches, P nodes per leaf, U up-links per
//                                         leaf (= spine switches)
//   dragonfly:GxAxPxH[:routing=R]         G groups of A routers, P nodes per router, H global
//                                         ports per router; R = minimal (default) or valiant
// Returns InvalidArgument naming the problem for anything else.
Result<std::unique_ptr<Topology>> ParseTopology(std::string_view spec);

}  // namespace iorelay::placement
