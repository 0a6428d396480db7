// Torus geometry and Blue Gene/Q deterministic routing (see torus.h for the numbering).
#include "placement/torus.h"

#include <fmt/format.h>

#include <cstdlib>
#include <limits>

namespace iorelay::placement {

Result<Torus> Torus::Make(std::vector<int> dims, std::vector<int> order) {
  if (dims.empty() || dims.size() > 26) {
    return Status::InvalidArgument("a torus needs 1 to 26 dimensions");
  }
  int64_t nodes = 1;
  for (int d : dims) {
    if (d < 1) return Status::InvalidArgument(fmt::format("torus ring size {} is not >= 1", d));
    nodes *= d;
    if (nodes * 2 * static_cast<int64_t>(dims.size()) > std::numeric_limits<int32_t>::max()) {
      return Status::InvalidArgument("torus too large for 32-bit link ids");
    }
  }
  if (order.empty()) {
    for (size_t i = 0; i < dims.size(); ++i) order.push_back(static_cast<int>(i));
  }
  if (order.size() != dims.size()) {
    return Status::InvalidArgument(fmt::format(
        "dimension order has {} entries, torus has {} dimensions", order.size(), dims.size()));
  }
  std::vector<bool> seen(dims.size(), false);
  for (int d : order) {
    if (d < 0 || d >= static_cast<int>(dims.size()) || seen[d]) {
      return Status::InvalidArgument("dimension order is not a permutation of the dimensions");
    }
    seen[d] = true;
  }
  return Torus(std::move(dims), std::move(order));
}

Torus::Torus(std::vector<int> dims, std::vector<int> order)
    : dims_(std::move(dims)), order_(std::move(order)), strides_(dims_.size()) {
  int32_t stride = 1;
  for (int d = ndims() - 1; d >= 0; --d) {
    strides_[d] = stride;
    stride *= dims_[d];
  }
  num_nodes_ = stride;
}

std::string DimensionLetters(const std::vector<int>& order) {
  std::string s;
  for (int d : order) s.push_back(static_cast<char>('A' + d));
  return s;
}

std::string Torus::spec() const {
  return fmt::format("torus:{}:order={}", fmt::join(dims_, "x"), DimensionLetters(order_));
}

std::vector<int> Torus::Coords(VertexId v) const {
  std::vector<int> c(dims_.size());
  for (int d = 0; d < ndims(); ++d) c[d] = Coord(v, d);
  return c;
}

VertexId Torus::NodeAt(const std::vector<int>& coords) const {
  VertexId v = 0;
  for (int d = 0; d < ndims(); ++d) v += coords[d] * strides_[d];
  return v;
}

VertexId Torus::Step(VertexId v, int dim, int dir) const {
  const int n = dims_[dim];
  const int c = Coord(v, dim);
  const int next = (c + dir + n) % n;
  return v + (next - c) * strides_[dim];
}

int Torus::RingSteps(int dim, int from_coord, int to_coord) const {
  const int n = dims_[dim];
  const int forward = ((to_coord - from_coord) % n + n) % n;
  if (forward == 0) return 0;
  const int backward = n - forward;
  if (forward < backward) return forward;
  if (backward < forward) return -backward;
  return from_coord % 2 == 0 ? forward : -backward;  // exactly half the ring
}

void Torus::Neighbors(VertexId v, std::vector<VertexId>* out) const {
  out->clear();
  for (int d = 0; d < ndims(); ++d) {
    if (dims_[d] > 1) out->push_back(Step(v, d, +1));
    if (dims_[d] > 2) out->push_back(Step(v, d, -1));
  }
}

VertexId Torus::NextHop(VertexId from, VertexId to) const {
  for (int d : order_) {
    const int steps = RingSteps(d, Coord(from, d), Coord(to, d));
    if (steps != 0) return Step(from, d, steps > 0 ? +1 : -1);
  }
  return from;
}

void Torus::Route(VertexId from, VertexId to, std::vector<LinkId>* links) const {
  VertexId at = from;
  const int per_node = 2 * ndims();
  for (int d : order_) {
    const int steps = RingSteps(d, Coord(at, d), Coord(to, d));
    const int dir = steps > 0 ? +1 : -1;
    for (int i = 0; i < std::abs(steps); ++i) {
      links->push_back(at * per_node + 2 * d + (dir > 0 ? 0 : 1));
      at = Step(at, d, dir);
    }
  }
}

int Torus::Hops(VertexId from, VertexId to) const {
  int hops = 0;
  for (int d = 0; d < ndims(); ++d) hops += std::abs(RingSteps(d, Coord(from, d), Coord(to, d)));
  return hops;
}

std::pair<VertexId, VertexId> Torus::LinkEnds(LinkId link) const {
  const int per_node = 2 * ndims();
  const VertexId tail = link / per_node;
  const int d = (link % per_node) / 2;
  const int dir = link % 2 == 0 ? +1 : -1;
  return {tail, Step(tail, d, dir)};
}

std::string Torus::LinkName(LinkId link) const {
  const int per_node = 2 * ndims();
  const VertexId tail = link / per_node;
  const int d = (link % per_node) / 2;
  return fmt::format("({}){}{}", fmt::join(Coords(tail), ","), link % 2 == 0 ? '+' : '-',
                     static_cast<char>('A' + d));
}

}  // namespace iorelay::placement
