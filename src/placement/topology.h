// The one interface every network topology implements, so placement policies and metrics work
// on a Blue Gene/Q torus and on a fat tree alike (and the simulator can reuse the routes).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace iorelay::placement {

// A vertex is a compute node (an "endpoint", ids [0, num_nodes())) or a switch (ids
// [num_nodes(), num_vertices())). A torus has no switches. Links are directed.
using VertexId = int32_t;
using LinkId = int32_t;

// Pure, immutable after construction, safe to share between threads.
class Topology {
 public:
  virtual ~Topology() = default;

  // The canonical spec string, e.g. "torus:4x4x4x4x2:order=ABCDE"; parsing it gives an equal
  // topology (see topology_spec.h).
  virtual std::string spec() const = 0;
  virtual int32_t num_nodes() const = 0;
  virtual int32_t num_vertices() const = 0;
  // Directed link ids are [0, num_links()); some may never carry a route (e.g. rings of size 1).
  virtual int32_t num_links() const = 0;

  // Distinct vertices one link away from v, appended to *out (cleared first).
  virtual void Neighbors(VertexId v, std::vector<VertexId>* out) const = 0;
  // The next vertex on the default (deterministic) route from `from` to the compute node `to`;
  // requires from != to. Routes are destination-based: the route from NextHop(a, b) to b is the
  // rest of the route from a to b.
  virtual VertexId NextHop(VertexId from, VertexId to) const = 0;
  // Appends the links of the default route from `from` to the compute node `to` to *links, in
  // order; nothing when from == to.
  virtual void Route(VertexId from, VertexId to, std::vector<LinkId>* links) const = 0;
  // Number of links on that route.
  virtual int Hops(VertexId from, VertexId to) const = 0;
  // (tail, head) of a directed link.
  virtual std::pair<VertexId, VertexId> LinkEnds(LinkId link) const = 0;
  // A human-readable link name for tables and plots, e.g. "12+B".
  virtual std::string LinkName(LinkId link) const = 0;
};

}  // namespace iorelay::placement
