// Parses iorelay-place's flags; every error names the flag and what was expected.
#include "options.h"

#include <fmt/format.h>

#include <charconv>
#include <string_view>

#include "placement/bgq_layout.h"
#include "placement/policy.h"

namespace iorelay::place_tool {
namespace {

Result<int> ParsePositive(std::string_view flag, std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 1) {
    return Status::InvalidArgument(
        fmt::format("{} expects a positive integer, got '{}'", flag, text));
  }
  return value;
}

std::vector<std::string> SplitComma(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    out.emplace_back(s.substr(0, comma));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

bool KnownPolicy(const std::string& name) {
  for (const std::string& p : placement::PolicyNames()) {
    if (p == name) return true;
  }
  return false;
}

}  // namespace

std::string Usage() {
  return fmt::format(
      "usage: iorelay-place (--topology SPEC | --nodes N) [options]\n"
      "       iorelay-place --table 512,1024,2048,4096,8192 [options]\n"
      "Compares I/O-node assignment policies on a network topology and writes the mapping.\n"
      "  --topology SPEC        torus:4x4x4x4x2[:order=ABCDE], fattree:LEAVESxPERLEAFxUP or\n"
      "                         dragonfly:GROUPSxROUTERSxNODESxGLOBALS[:routing=valiant]\n"
      "  --nodes N              a Mira partition ({})\n"
      "  --policies A,B,...     policies to compare (default: all of {})\n"
      "  --policy P             policy whose mapping --out writes (default route-aware)\n"
      "  --ranks-per-node R     MPI ranks per compute node (default 16)\n"
      "  --aggregate            intra-node aggregation: one message per node\n"
      "  --cap C                route-aware connectivity tree cap (default 256)\n"
      "  --unreached R          route-aware, nodes no tree reaches: default (their default\n"
      "                         bridge, as the paper) or nearest (nearest bridge under share)\n"
      "  --nodes-per-bridge K   layout when the topology is not made of BG/Q midplanes (64)\n"
      "  --daemon-unit U        ionode (default) or bridge: what a daemon index numbers\n"
      "  --out FILE             write the mapping JSON ({{\"mapping\": {{node: daemon}}}})\n"
      "  --json                 print metrics as JSON instead of a table\n"
      "  --link-loads           with --json: messages per link for default and --policy\n"
      "  --table SIZES          Markdown tables, default vs route-aware, per partition size\n",
      fmt::join(placement::MiraPartitionSizes(), ", "), fmt::join(placement::PolicyNames(), ", "));
}

Result<Options> ParseOptions(int argc, char** argv) {
  Options o;
  o.policies = placement::PolicyNames();
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    auto value = [&]() -> Result<std::string_view> {
      if (i + 1 >= argc) return Status::InvalidArgument(fmt::format("{} needs a value", flag));
      return std::string_view(argv[++i]);
    };
    auto number = [&]() -> Result<int> {
      Result<std::string_view> v = value();
      if (!v.ok()) return v.status();
      return ParsePositive(flag, *v);
    };
    if (flag == "--help" || flag == "-h") {
      o.help = true;
    } else if (flag == "--aggregate") {
      o.aggregate = true;
    } else if (flag == "--json") {
      o.json = true;
    } else if (flag == "--link-loads") {
      o.link_loads = true;
    } else if (flag == "--topology" || flag == "--policy" || flag == "--policies" ||
               flag == "--out" || flag == "--daemon-unit" || flag == "--table" ||
               flag == "--unreached") {
      Result<std::string_view> v = value();
      if (!v.ok()) return v.status();
      if (flag == "--topology") o.topology = *v;
      if (flag == "--policy") o.policy = *v;
      if (flag == "--policies") o.policies = SplitComma(*v);
      if (flag == "--out") o.out = *v;
      if (flag == "--daemon-unit") {
        if (*v != "ionode" && *v != "bridge") {
          return Status::InvalidArgument("--daemon-unit expects ionode or bridge");
        }
        o.unit = *v == "bridge" ? placement::DaemonUnit::kBridge : placement::DaemonUnit::kIonode;
      }
      if (flag == "--unreached") {
        if (*v != "default" && *v != "nearest") {
          return Status::InvalidArgument("--unreached expects default or nearest");
        }
        o.unreached = *v == "nearest" ? placement::Unreached::kNearestUnderShare
                                      : placement::Unreached::kDefaultBridge;
      }
      if (flag == "--table") {
        for (const std::string& s : SplitComma(*v)) {
          Result<int> n = ParsePositive(flag, s);
          if (!n.ok()) return n.status();
          o.table_sizes.push_back(*n);
        }
      }
    } else if (flag == "--nodes" || flag == "--ranks-per-node" || flag == "--cap" ||
               flag == "--nodes-per-bridge") {
      Result<int> n = number();
      if (!n.ok()) return n.status();
      if (flag == "--nodes") {
        Result<std::vector<int>> shape = placement::MiraPartitionShape(*n);
        if (!shape.ok()) return shape.status();
        o.topology = fmt::format("torus:{}", fmt::join(*shape, "x"));
      }
      if (flag == "--ranks-per-node") o.ranks_per_node = *n;
      if (flag == "--cap") o.tree_cap = *n;
      if (flag == "--nodes-per-bridge") o.nodes_per_bridge = *n;
    } else {
      return Status::InvalidArgument(fmt::format("unknown argument '{}'", flag));
    }
  }
  if (o.help) return o;
  for (const std::string& p : o.policies) {
    if (!KnownPolicy(p)) return Status::InvalidArgument(fmt::format("unknown policy '{}'", p));
  }
  if (!KnownPolicy(o.policy)) {
    return Status::InvalidArgument(fmt::format("unknown policy '{}'", o.policy));
  }
  if (o.table_sizes.empty() && o.topology.empty()) {
    return Status::InvalidArgument("give --topology, --nodes or --table");
  }
  return o;
}

}  // namespace iorelay::place_tool
