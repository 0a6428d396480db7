// iorelay-aggregators: which ranks should aggregate a collective MPI-IO write, by the rules of
// src/collective (one per node, cb_nodes, the saturation point, stripes, I/O nodes), as JSON
// with the reasons and the ROMIO hints that ask for it.
#include <fmt/format.h>

#include <cstdio>

#include "collective/aggregators.h"
#include "common/option_table.h"
#include "common/version_flag.h"

namespace iorelay::aggregators_tool {
namespace {

struct Options {
  collective::JobShape job;
  bool help = false;
};

cli::OptionTable Table(Options* o) {
  collective::JobShape& j = o->job;
  cli::OptionTable t(
      "usage: iorelay-aggregators --ranks P [options]\n",
      "Prints the aggregator count, the ranks (spread over nodes) and why, as JSON.\n"
      "Exit status: 0 ok, 2 bad options or a job shape the rules reject.\n");
  t.Add(cli::Integer("ranks", "P", &j.ranks, 1, INT32_MAX, "MPI ranks (1)"))
      .Add(cli::Integer("ranks-per-node", "R", &j.ranks_per_node, 1, INT32_MAX,
                        "ranks per node, placed in blocks (1)"))
      .Add(cli::Integer("ionodes", "K", &j.ionodes, 0, INT32_MAX, "I/O nodes (0: direct)"))
      .Add(cli::Integer("stripe-count", "C", &j.stripe_count, 1, INT32_MAX,
                        "the file's stripe count (1: not striped)"))
      .Add(cli::Bytes("stripe-size", "SIZE", &j.stripe_size_bytes, "the file's stripe size"))
      .Add(cli::Bytes("bytes-per-call", "SIZE", &j.bytes_per_collective,
                      "data of all ranks in one collective call (for --saturation-point)"))
      .Add(cli::Bytes("saturation-point", "SIZE", &j.saturation_point_bytes,
                      "k, measured: bytes per aggregator at which a write saturates (0: none)"))
      .Add(cli::Integer("cb-nodes", "N", &j.cb_nodes, 0, INT32_MAX, "the cb_nodes hint (0: none)"))
      .Add(cli::Integer("max-per-node", "M", &j.max_per_node, 1, INT32_MAX,
                        "cb_config_list *:M, at most M aggregators per node (1)"));
  return t;
}

int Main(int argc, char** argv) {
  Options o;
  auto parsed = Table(&o).Parse(argc, argv);
  if (!parsed.ok()) {
    fmt::print(stderr, "iorelay-aggregators: {}\n{}", parsed.status().message(), Table(&o).Help());
    return 2;
  }
  if (parsed->help) {
    std::fputs(Table(&o).Help().c_str(), stdout);
    return 0;
  }
  if (parsed->print_config) {
    std::printf("%s\n", Table(&o).ToJson().dump(2).c_str());
    return 0;
  }
  auto choice = collective::ChooseAggregators(o.job);
  if (!choice.ok()) {
    fmt::print(stderr, "iorelay-aggregators: {}\n", choice.status().message());
    return 2;
  }
  const auto count = static_cast<int32_t>(choice->ranks.size());
  // ROMIO's wildcard takes up to M ranks of each host in rank order and stops at cb_nodes: an M
  // above what the count needs per node would pack the aggregators on the first hosts.
  const int32_t nodes = collective::NodeCount(o.job);
  const int32_t per_node = (count + nodes - 1) / nodes;
  const nlohmann::json out = {
      {"job", Table(&o).ToJson()},
      {"nodes", nodes},
      {"aggregators", count},
      {"ranks", choice->ranks},
      {"reasons", choice->reasons},
      {"romio_hints",
       {{"cb_nodes", std::to_string(count)}, {"cb_config_list", fmt::format("*:{}", per_node)}}},
  };
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace
}  // namespace iorelay::aggregators_tool

int main(int argc, char** argv) {
  if (iorelay::PrintVersionIfAsked(argc, argv, "iorelay-aggregators")) return 0;
  return iorelay::aggregators_tool::Main(argc, argv);
}
