// Builds the Blue Gene/Q bridge-node layout and default assignment described in bgq_layout.h.
#include "placement/bgq_layout.h"

#include <fmt/format.h>

namespace iorelay::placement {
namespace {

constexpr int kDims = 5;
constexpr int kMidplaneNodes = 512;
constexpr int kShare = kMidplaneNodes / kBridgesPerMidplane;  // 64

// Local coordinates (a, b, c, d, e) of a midplane's bridge nodes, in bridge order.
constexpr int kBridgeLocal[kBridgesPerMidplane][kDims] = {
    {0, 0, 0, 0, 0}, {0, 0, 2, 0, 1}, {0, 2, 0, 0, 1}, {0, 2, 2, 0, 0},
    {2, 0, 0, 0, 1}, {2, 0, 2, 0, 0}, {2, 2, 0, 0, 0}, {2, 2, 2, 0, 1}};

// Lexicographic index of coords within a box of the given shape (last dimension fastest).
int BoxIndex(const int* coords, const int* shape) {
  int index = 0;
  for (int d = 0; d < kDims; ++d) index = index * shape[d] + coords[d];
  return index;
}

}  // namespace

Result<IoLayout> MakeBgqLayout(const Torus& torus) {
  if (torus.ndims() != kDims) {
    return Status::InvalidArgument("the Blue Gene/Q layout needs a 5-D torus");
  }
  int per_dim[kDims];  // midplanes along each dimension
  for (int d = 0; d < kDims; ++d) {
    if (torus.dims()[d] % kMidplaneShape[d] != 0) {
      return Status::InvalidArgument(
          fmt::format("Blue Gene/Q layout: {} is not a multiple of the 4x4x4x4x2 midplane",
                      fmt::join(torus.dims(), "x")));
    }
    per_dim[d] = torus.dims()[d] / kMidplaneShape[d];
  }
  const int32_t n = torus.num_nodes();
  const int midplanes = n / kMidplaneNodes;
  IoLayout layout;
  layout.model = "bgq";
  layout.num_ionodes = midplanes * kBridgesPerMidplane / kBridgesPerIonode;
  layout.bridges.resize(midplanes * kBridgesPerMidplane);
  layout.ionode_of_bridge.resize(layout.bridges.size());
  layout.default_bridge.resize(n);
  int coords[kDims], mid[kDims], local[kDims];
  for (VertexId v = 0; v < n; ++v) {
    for (int d = 0; d < kDims; ++d) {
      coords[d] = torus.Coord(v, d);
      mid[d] = coords[d] / kMidplaneShape[d];
      local[d] = coords[d] % kMidplaneShape[d];
    }
    const int m = BoxIndex(mid, per_dim);
    layout.default_bridge[v] = m * kBridgesPerMidplane + BoxIndex(local, kMidplaneShape) / kShare;
    if (BoxIndex(local, kMidplaneShape) != 0) continue;  // once per midplane: its bridges
    for (int j = 0; j < kBridgesPerMidplane; ++j) {
      std::vector<int> at(kDims);
      for (int d = 0; d < kDims; ++d) at[d] = coords[d] + kBridgeLocal[j][d];
      const int b = m * kBridgesPerMidplane + j;
      layout.bridges[b] = torus.NodeAt(at);
      layout.ionode_of_bridge[b] = b / kBridgesPerIonode;
    }
  }
  IORELAY_RETURN_IF_ERROR(FinishLayout(n, &layout));
  return layout;
}

const std::vector<int>& MiraPartitionSizes() {
  static const std::vector<int> kSizes = {512, 1024, 2048, 4096, 8192, 16384, 32768, 49152};
  return kSizes;
}

Result<std::vector<int>> MiraPartitionShape(int nodes) {
  switch (nodes) {
    case 512:
      return std::vector<int>{4, 4, 4, 4, 2};
    case 1024:
      return std::vector<int>{4, 4, 4, 8, 2};
    case 2048:
      return std::vector<int>{4, 4, 8, 8, 2};
    case 4096:
      return std::vector<int>{4, 8, 8, 8, 2};
    case 8192:
      return std::vector<int>{8, 8, 8, 8, 2};
    case 16384:
      return std::vector<int>{8, 8, 8, 16, 2};
    case 32768:
      return std::vector<int>{8, 8, 16, 16, 2};
    case 49152:
      return std::vector<int>{8, 12, 16, 16, 2};
    default:
      break;
  }
  return Status::NotFound(fmt::format("no Mira partition shape for {} nodes", nodes));
}

}  // namespace iorelay::placement
