// An N-dimensional torus with Blue Gene/Q deterministic routing: dimensions in a configurable
// order, the shorter way round each ring, and at exactly half a ring even coordinates go +.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "placement/topology.h"

namespace iorelay::placement {

// Node ids are mixed-radix coordinates, dimension 0 ("A") most significant, the last fastest:
// on 4x4x4x4x2, id = (((a*4 + b)*4 + c)*4 + d)*2 + e. Each node owns 2 links per dimension,
// id = node*2*D + 2*dim + (0 for +, 1 for -); in a ring of 2 both lead to the same neighbour,
// in a ring of 1 neither is ever used.
class Torus final : public Topology {
 public:
  // dims: ring sizes (each >= 1, product <= 2^31/(2*D)); order: a permutation of 0..D-1, the
  // routing order (empty means 0,1,...,D-1).
  static Result<Torus> Make(std::vector<int> dims, std::vector<int> order = {});

  std::string spec() const override;
  int32_t num_nodes() const override { return num_nodes_; }
  int32_t num_vertices() const override { return num_nodes_; }
  int32_t num_links() const override { return num_nodes_ * 2 * ndims(); }
  void Neighbors(VertexId v, std::vector<VertexId>* out) const override;
  VertexId NextHop(VertexId from, VertexId to) const override;
  void Route(VertexId from, VertexId to, std::vector<LinkId>* links) const override;
  int Hops(VertexId from, VertexId to) const override;
  std::pair<VertexId, VertexId> LinkEnds(LinkId link) const override;
  std::string LinkName(LinkId link) const override;

  int ndims() const { return static_cast<int>(dims_.size()); }
  const std::vector<int>& dims() const { return dims_; }
  const std::vector<int>& order() const { return order_; }
  int Coord(VertexId v, int dim) const { return (v / strides_[dim]) % dims_[dim]; }
  std::vector<int> Coords(VertexId v) const;
  VertexId NodeAt(const std::vector<int>& coords) const;
  // The node one step from v along dim, in direction +1 or -1 (wrapping).
  VertexId Step(VertexId v, int dim, int dir) const;
  // Signed number of steps the default route takes in dim from coordinate a to b (+ or -).
  int RingSteps(int dim, int from_coord, int to_coord) const;

 private:
  Torus(std::vector<int> dims, std::vector<int> order);
  std::vector<int> dims_;
  std::vector<int> order_;
  std::vector<int32_t> strides_;
  int32_t num_nodes_ = 0;
};

// "ABCDE" for order {0,1,2,3,4}: dimension i is the letter 'A' + i.
std::string DimensionLetters(const std::vector<int>& order);

}  // namespace iorelay::placement
