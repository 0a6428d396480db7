// iorelay-sim-collective: one simulated collective (or independent) MPI-IO write of a shared
// striped file, JSON on stdout (a thin main over sim::RunCollective).
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "common/option_table.h"
#include "common/version_flag.h"
#include "sim/collective_run.h"

namespace iorelay::sim {
namespace {

struct Options {
  std::string platform;
  CollectiveSpec spec;
  bool independent = false;
  bool read = false;
  bool measured_k = false;  // k from the platform (collective.saturation_point[_by_mpi])
  std::string mpi;          // whose k, with measured_k
};

cli::OptionTable Table(Options* o) {
  CollectiveSpec& s = o->spec;
  cli::OptionTable t(
      "usage: iorelay-sim-collective --platform FILE [options]\n",
      "In call c, rank r writes --bytes-per-rank bytes at (c * ranks + r) * bytes (IOR -c).\n"
      "Exit status: 0 ok, 2 bad options or a spec the platform cannot hold, 1 a failed run.\n");
  t.Add(cli::Text("platform", "FILE", &o->platform, "platform file (platforms/*.json)"))
      .Add(cli::Integer("nodes", "N", &s.nodes, 1, 1 << 20, "compute nodes (1)"))
      .Add(cli::Integer("ranks-per-node", "R", &s.ranks_per_node, 1, 1 << 16,
                        "ranks per node, placed in blocks (1)"))
      .Add(cli::Bytes("bytes-per-rank", "SIZE", &s.bytes_per_rank,
                      "each rank's contiguous piece of one call (1MiB)"))
      .Add(cli::Integer("calls", "N", &s.calls, 1, 1 << 20, "collective calls (1)"))
      .Add(cli::Flag("independent", &o->independent,
                     "independent I/O: each rank writes its own pieces"))
      .Add(cli::Flag("read", &o->read, "read the file instead of writing it"))
      .Add(cli::Bytes("saturation-point", "SIZE", &s.saturation_point_bytes,
                      "without --cb-nodes: ceil(call bytes / k) aggregators (with --plan ompio: "
                      "split/merge's groups around k; 0: one per node)"))
      .Add(cli::Flag("measured-k", &o->measured_k,
                     "--saturation-point from the platform's measured k (refused if none)"))
      .Add(cli::Text("mpi", "NAME", &o->mpi,
                     "with --measured-k: that MPI's own k (ompio, romio321, mpich)"))
      .Add(cli::Integer("cb-nodes", "A", &s.cb_nodes, 0, 1 << 20,
                        "the cb_nodes hint (0: one per node, then aligned to the stripes; with "
                        "--plan ompio: io_ompio_num_aggregators groups)"))
      .Add(cli::Integer("max-per-node", "M", &s.max_per_node, 1, 1 << 16,
                        "cb_config_list *:M, at most M aggregators per node (1)"))
      .Add(cli::Flag("packed", &s.packed, "pack the aggregators onto few nodes (default: spread)"))
      .Add(cli::Bytes("cb-buffer-size", "SIZE", &s.cb_buffer_bytes,
                      "cb_buffer_size (16MiB); with --plan ompio each group's cycle, half of "
                      "io_ompio_bytes_per_agg"))
      .Add(cli::Choice<CollectivePlan>(
          "plan", &s.plan, {{"romio", CollectivePlan::kRomio}, {"ompio", CollectivePlan::kOmpio}},
          "whose collective write: ROMIO's two-phase cycles (romio), or OMPIO's groups with a "
          "cycle's exchange overlapping the last cycle's writes (ompio)"))
      .Add(cli::Choice<OmpioAsync>(
          "ompio-async", &s.ompio_async,
          {{"auto", OmpioAsync::kAuto}, {"on", OmpioAsync::kOn}, {"off", OmpioAsync::kOff}},
          "with --plan ompio, fcoll_vulcan_async_io: overlap a cycle's exchange with the last "
          "cycle's writes always (on), never (off), or in calls of more than 2 cycles (auto)"))
      .Add(cli::Choice<collective::Segmentation>(
          "segmentation", &s.segmentation,
          {{"dynamic", collective::Segmentation::kDynamic},
           {"static", collective::Segmentation::kStatic}},
          "with --plan ompio: each cycle takes the group's next bytes in file order (dynamic) or "
          "an even share of every rank's (static)"))
      .Add(cli::Integer("stripe-count", "C", &s.stripe_count, 1, 1 << 20,
                        "the file's stripe count (1)"))
      .Add(cli::Bytes("stripe-size", "SIZE", &s.stripe_bytes, "the file's stripe size (1MiB)"))
      .Add(cli::Bytes("rpc", "SIZE", &s.rpc_bytes, "a client's write RPC (1MiB)"))
      .Add(cli::Integer("rpcs-in-flight", "N", &s.rpcs_in_flight, 1, 1 << 16,
                        "RPCs in flight per writing process (8)"))
      .Add(cli::Integer("seed", "N", &s.seed, 0, INT64_MAX, "seed (1)"));
  return t;
}

int Main(int argc, char** argv) {
  Options o;
  auto parsed = Table(&o).Parse(argc, argv);
  if (!parsed.ok()) {
    fmt::print(stderr, "iorelay-sim-collective: {}\n{}", parsed.status().message(),
               Table(&o).Help());
    return 2;
  }
  if (parsed->help) {
    std::fputs(Table(&o).Help().c_str(), stdout);
    return 0;
  }
  if (o.platform.empty()) {
    fmt::print(stderr, "iorelay-sim-collective: --platform FILE is required\n");
    return 2;
  }
  auto platform = LoadPlatform(o.platform);
  if (!platform.ok()) {
    fmt::print(stderr, "iorelay-sim-collective: {}\n", platform.status().message());
    return 2;
  }
  if (!o.mpi.empty() && !o.measured_k) {
    fmt::print(stderr, "iorelay-sim-collective: --mpi needs --measured-k\n");
    return 2;
  }
  if (o.measured_k) {
    if (o.spec.saturation_point_bytes > 0) {
      fmt::print(stderr, "iorelay-sim-collective: --measured-k or --saturation-point, not both\n");
      return 2;
    }
    auto k = MeasuredSaturationPoint(platform->collective, o.mpi);
    if (!k.ok()) {
      fmt::print(stderr, "iorelay-sim-collective: {}: {}\n", o.platform, k.status().message());
      return 2;
    }
    o.spec.saturation_point_bytes = *k;
  }
  o.spec.collective = !o.independent;
  o.spec.write = !o.read;
  auto result = RunCollective(*platform, o.spec);
  if (!result.ok()) {
    fmt::print(stderr, "iorelay-sim-collective: {}\n", result.status().message());
    return result.status().code() == EINVAL ? 2 : 1;
  }
  std::printf("%s\n", CollectiveJson(*platform, o.spec, *result).dump(2).c_str());
  return 0;
}

}  // namespace
}  // namespace iorelay::sim

int main(int argc, char** argv) {
  if (iorelay::PrintVersionIfAsked(argc, argv, "iorelay-sim-collective")) return 0;
  return iorelay::sim::Main(argc, argv);
}
