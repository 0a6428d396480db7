// The Blue Gene/Q I/O layout as we model it (bridge node positions and the boot-time default
// assignment), and the Mira partition shapes. An assumption: the real default comes from the
// machine's control system; docs/placement.md states the model.
#pragma once

#include <vector>

#include "common/status.h"
#include "placement/io_layout.h"
#include "placement/torus.h"

namespace iorelay::placement {

// A midplane: 512 nodes, shape 4x4x4x4x2, 8 bridge nodes, 4 I/O nodes (2 bridges each).
inline constexpr int kMidplaneShape[5] = {4, 4, 4, 4, 2};
inline constexpr int kBridgesPerMidplane = 8;
inline constexpr int kBridgesPerIonode = 2;

// Requires a 5-D torus whose every ring size is a multiple of the midplane's. Per midplane
// (local coordinates a,b,c,d,e), the 8 bridge nodes sit at (2i, 2j, 2k, 0, 0), i,j,k in {0,1},
// numbered in that lexicographic order; bridges 2m and 2m+1 of a midplane share an I/O node.
// Midplanes are numbered in lexicographic order of their coordinates; bridge index =
// midplane*8 + local index. Default share: the midplane's nodes in lexicographic order of
// local coordinates (A slowest, E fastest) cut into 8 blocks of 64; block m -> bridge m,
// regardless of routes.
Result<IoLayout> MakeBgqLayout(const Torus& torus);

// Mira partition shapes we use (an assumption consistent with Mira's 8x12x16x16x2):
// 512 4x4x4x4x2, 1024 4x4x4x8x2, 2048 4x4x8x8x2, 4096 4x8x8x8x2, 8192 8x8x8x8x2,
// 16384 8x8x8x16x2, 32768 8x8x16x16x2, 49152 8x12x16x16x2. NotFound for other sizes.
Result<std::vector<int>> MiraPartitionShape(int nodes);
const std::vector<int>& MiraPartitionSizes();

}  // namespace iorelay::placement
