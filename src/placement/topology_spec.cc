// Parses topology spec strings into Torus or FatTree objects (grammar in topology_spec.h).
#include "placement/topology_spec.h"

#include <fmt/format.h>

#include <charconv>
#include <string>
#include <vector>

#include "placement/dragonfly.h"
#include "placement/fattree.h"
#include "placement/torus.h"

namespace iorelay::placement {
namespace {

// "4x4x2" -> {4, 4, 2}; each part a positive decimal integer.
Result<std::vector<int>> ParseShape(std::string_view s) {
  std::vector<int> out;
  while (true) {
    const size_t x = s.find('x');
    const std::string_view part = s.substr(0, x);
    int value = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || value < 1) {
      return Status::InvalidArgument(fmt::format("bad size '{}' in shape", part));
    }
    out.push_back(value);
    if (x == std::string_view::npos) return out;
    s.remove_prefix(x + 1);
  }
}

Result<std::unique_ptr<Topology>> ParseTorus(std::string_view rest) {
  const size_t colon = rest.find(':');
  Result<std::vector<int>> dims = ParseShape(rest.substr(0, colon));
  if (!dims.ok()) return dims.status();
  std::vector<int> order;
  if (colon != std::string_view::npos) {
    std::string_view opt = rest.substr(colon + 1);
    if (!opt.starts_with("order=")) {
      return Status::InvalidArgument(fmt::format("unknown torus option '{}'", opt));
    }
    for (char c : opt.substr(6)) {
      if (c < 'A' || c > 'Z') {
        return Status::InvalidArgument(fmt::format("bad dimension letter '{}' in order", c));
      }
      order.push_back(c - 'A');
    }
  }
  Result<Torus> torus = Torus::Make(std::move(*dims), std::move(order));
  if (!torus.ok()) return torus.status();
  return std::unique_ptr<Topology>(new Torus(std::move(*torus)));
}

Result<std::unique_ptr<Topology>> ParseFatTree(std::string_view rest) {
  Result<std::vector<int>> parts = ParseShape(rest);
  if (!parts.ok()) return parts.status();
  if (parts->size() != 3) {
    return Status::InvalidArgument("fattree needs LEAVESxNODES_PER_LEAFxUPLINKS");
  }
  Result<FatTree> tree = FatTree::Make((*parts)[0], (*parts)[1], (*parts)[2]);
  if (!tree.ok()) return tree.status();
  return std::unique_ptr<Topology>(new FatTree(std::move(*tree)));
}

Result<std::unique_ptr<Topology>> ParseDragonfly(std::string_view rest) {
  const size_t colon = rest.find(':');
  Result<std::vector<int>> parts = ParseShape(rest.substr(0, colon));
  if (!parts.ok()) return parts.status();
  if (parts->size() != 4) {
    return Status::InvalidArgument(
        "dragonfly needs GROUPSxROUTERS_PER_GROUPxNODES_PER_ROUTERxGLOBAL_PORTS");
  }
  DragonflyRouting routing = DragonflyRouting::kMinimal;
  if (colon != std::string_view::npos) {
    std::string_view opt = rest.substr(colon + 1);
    if (opt == "routing=valiant") {
      routing = DragonflyRouting::kValiant;
    } else if (opt != "routing=minimal") {
      return Status::InvalidArgument(fmt::format(
          "unknown dragonfly option '{}': expected routing=minimal or routing=valiant", opt));
    }
  }
  Result<Dragonfly> d =
      Dragonfly::Make((*parts)[0], (*parts)[1], (*parts)[2], (*parts)[3], routing);
  if (!d.ok()) return d.status();
  return std::unique_ptr<Topology>(new Dragonfly(std::move(*d)));
}

}  // namespace

Result<std::unique_ptr<Topology>> ParseTopology(std::string_view spec) {
  Result<std::unique_ptr<Topology>> out = Status::InvalidArgument("");
  if (spec.starts_with("torus:")) {
    out = ParseTorus(spec.substr(6));
  } else if (spec.starts_with("fattree:")) {
    out = ParseFatTree(spec.substr(8));
  } else if (spec.starts_with("dragonfly:")) {
    out = ParseDragonfly(spec.substr(10));
  } else {
    return Status::InvalidArgument(fmt::format(
        "topology '{}': expected torus:AxBx..., fattree:LxPxU or dragonfly:GxAxPxH", spec));
  }
  if (!out.ok()) {
    return Status::InvalidArgument(fmt::format("topology '{}': {}", spec, out.status().message()));
  }
  return out;
}

}  // namespace iorelay::placement
