// iorelay-sim's option table: the iorelay-bench pattern options plus the machine's choices.
#include "sim/sim_options.h"

#include <fmt/format.h>

#include <cstdint>

#include "common/option_table.h"
#include "placement/policy.h"
#include "workload/pattern.h"

namespace iorelay::sim {
namespace {

// The table binds to `o`: parsing writes into it, ToJson reads it.
cli::OptionTable Table(SimOptions* o) {
  RunConfig& c = o->run;
  PatternSpec& p = c.pattern;
  cli::OptionTable t(
      "usage: iorelay-sim --platform FILE [options]\n"
      "Simulates one run of an iorelay-bench pattern on SimGrid (the daemon's schedulers, "
      "dispatch\ncore and placement policies), or replays a daemon trace (--replay), and "
      "prints one JSON\nresult on stdout.\n",
      "Sizes: K, M, G or KiB, MiB, GiB (1024-based), kB, MB, GB (1000-based).\n"
      "Exit status: 0 ok, 1 simulation failed, 2 usage or bad platform.\n");
  t.Add(cli::Text("platform", "FILE", &o->platform_path, "platform JSON (platforms/*.json)"))
      .Add(cli::Choice("layout", &p.layout, workload::LayoutChoices(),
                       "file per process or one shared file (shared)"))
      .Add(cli::Choice("spatiality", &p.spatiality, workload::SpatialityChoices(),
                       "1D-strided: block = request (contiguous)"))
      .Add(cli::Choice("operation", &p.write, {{"write", true}, {"read", false}},
                       "what every request does (write)"))
      .Add(cli::Bytes("request", "SIZE", &p.request_bytes, "bytes per request, t (64K)"))
      .Add(cli::Bytes("block", "SIZE", &p.block_bytes,
                      "per-rank block per segment, b (0: 16 requests)"))
      .Add(cli::Integer("segments", "N", &p.segments, 0, INT64_MAX,
                        "segments, s (0: strided 16, contiguous 1)"))
      .Add(cli::Bytes("total", "SIZE", &p.total_bytes,
                      "bytes of all ranks together, instead of b and s (0: none)"))
      .Add(cli::Seconds("stonewall", "SECONDS", &p.stonewall_s,
                        "each rank stops issuing requests after T simulated s (0: none)"))
      .Add(cli::Flag("wearout", &p.wearout,
                     "after the stonewall, every rank issues requests up to the largest count\n"
                     "any rank reached by it (the bench's --wearout; needs --stonewall)"))
      .Add(cli::Integer("max-requests", "N", &p.max_requests, 0, INT64_MAX,
                        "each rank issues at most its first N requests, layout unchanged (0: all)"))
      .Add(cli::Flag("odirect", &p.odirect,
                     "O_DIRECT requests (multiples of 4096; merged only with each other)"))
      .Add(cli::Integer("mdtest", "N", &c.mdtest.files_per_rank, 0, INT64_MAX,
                        "instead of the pattern, mdtest's file phases: every rank creates N\n"
                        "files, stats, reads and removes them, a barrier between phases\n"
                        "(needs the platform's storage.metadata_service) (0: the pattern)"))
      .Add(cli::Bytes("mdtest-bytes", "SIZE", &c.mdtest.bytes,
                      "with --mdtest: bytes written at each create and read at each read (0)"))
      .Add(cli::Flag("mdtest-shared-dir", &c.mdtest.shared_directory,
                     "with --mdtest: every rank's files in one directory (mdtest without -u;\n"
                     "default: a directory per rank)"))
      .Add(cli::Integer("ranks", "N", &p.ranks, 1, UINT32_MAX, "processes (1)"))
      .Add(cli::Integer("nodes", "N", &p.nodes, 1, UINT32_MAX,
                        "compute nodes; ranks in blocks of ceil(ranks/nodes) (1)"))
      .Add(cli::Integer("ionodes", "K", &c.ionodes, 0, 1 << 20,
                        "I/O nodes; 0 = direct access to the storage (0)"))
      .Add(cli::Text("scheduler", "SPEC", &c.scheduler,
                     "I/O-node scheduler by registry spec, e.g. aioli:quantum=64KiB (fifo)"))
      .Add(cli::Text("placement", "POLICY", &c.placement,
                     fmt::format("compute node to I/O node: {} (block)",
                                 fmt::join(placement::PolicyNames(), ", "))))
      .Add(cli::Choice("issuer", &c.issuer,
                       {{"rank", Issuer::kRank},
                        {"node", Issuer::kNode},
                        {"node-aggregate", Issuer::kNodeAggregate}},
                       "an actor per rank; or per compute node, sending its ranks' requests\n"
                       "one at a time through its NIC, or aggregated: one message per step\n"
                       "with every rank's request, adjacent ones as one write (needs I/O\n"
                       "nodes) (rank)"))
      .Add(cli::Integer("seed", "N", &c.seed, 0, INT64_MAX,
                        "seed of the ranks' start jitter and the storage noise (1)"))
      .Add(cli::Text("replay", "TRACE[,TRACE...]", &o->replay_path,
                     "replay iorelayd --trace files (version 2) closed-loop, each daemon's\n"
                     "through its own I/O node with --scheduler, instead of a pattern; prints\n"
                     "the share of the daemons' dispatches the simulator made identically"))
      .Add(cli::Flag("list-dispatches", &o->list_dispatches,
                     "with --replay: list the simulated dispatches as [session, index] pairs\n"
                     "([trace, session, index] with several traces)"));
  return t;
}

}  // namespace

std::string SimUsage() {
  SimOptions o;
  return Table(&o).Help();
}

Result<SimOptions> ParseSimOptions(const std::vector<std::string>& args) {
  SimOptions o;
  Result<cli::ParseOutcome> parsed = Table(&o).Parse(args);
  if (!parsed.ok()) return parsed.status();
  o.help = parsed->help;
  if (parsed->print_config) o.printed_config = Table(&o).ToJson();
  if (o.help || parsed->print_config) return o;
  if (o.platform_path.empty()) return Status::InvalidArgument("--platform FILE is required");
  auto platform = LoadPlatform(o.platform_path);
  if (!platform.ok()) return platform.status();
  o.run.platform = *platform;
  if (!o.replay_path.empty()) {
    auto trace = ReadReplayTraces(o.replay_path);
    if (!trace.ok()) return trace.status();
    o.replay = std::move(*trace);
  }
  return o;  // the run itself is checked by Run (EINVAL before anything is simulated)
}

}  // namespace iorelay::sim
