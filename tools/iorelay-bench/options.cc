// Parses iorelay-bench's options and derives block size and segment count (see options.h).
#include "options.h"

#include <climits>
#include <string>

#include "common/option_table.h"
#include "common/units.h"
#include "hints.h"
#include "layout.h"

namespace iorelay::bench {
namespace {

// Fills block_bytes and segments as every pattern derives them (workload::Derive).
Status Derive(Options& o, uint32_t ranks) {
  Result<workload::Shape> shape = workload::Derive(o, ranks);
  if (!shape.ok()) return shape.status();
  o.block_bytes = shape->block_bytes;
  o.segments = shape->segments;
  if (o.ranks_per_node == 0) return Status::InvalidArgument("--ranks-per-node must be >= 1");
  return Status::Ok();
}

// MPI-IO's options need --api mpiio; collective calls need every rank to make the same number.
Status CheckApi(const Options& o) {
  if (o.api == Api::kPosix) {
    if (o.collective) return Status::InvalidArgument("--collective needs --api mpiio");
    if (!o.hints.empty()) return Status::InvalidArgument("--hint needs --api mpiio");
    if (o.view != View::kNone) return Status::InvalidArgument("--view needs --api mpiio");
    return Status::Ok();
  }
  if (o.odirect) {
    return Status::InvalidArgument("--odirect is POSIX only (MPI-IO: a hint such as direct_write)");
  }
  if (o.view != View::kNone) {
    if (o.layout != Layout::kShared) return Status::InvalidArgument("--view needs --layout shared");
    if (o.spatiality != Spatiality::kStrided) {
      return Status::InvalidArgument(
          "--view needs --spatiality strided (a view's calls cover several requests of a rank)");
    }
    if (o.stonewall_s > 0 || o.wearout) {
      return Status::InvalidArgument("--view runs every request (no --stonewall or --wearout)");
    }
  } else if (o.requests_per_call > 0) {
    return Status::InvalidArgument("--requests-per-call needs --view");
  }
  if (o.collective && o.stonewall_s > 0) {
    return Status::InvalidArgument(
        "--collective excludes --stonewall (every rank must make the same collective calls)");
  }
  return Status::Ok();
}

// A file view's datatype is built from C ints (MPI_Type_vector's stride, the subarray's sizes):
// a view whose extent does not fit one is refused here, naming it, rather than overflowing into a
// datatype MPI rejects or, worse, misreads.
Status CheckView(const Options& o, uint32_t ranks) {
  if (o.view == View::kNone) return Status::Ok();
  const auto fits = [](uint64_t v) { return v <= static_cast<uint64_t>(INT_MAX); };
  const std::string limit = " must fit an MPI int (at most " + std::to_string(INT_MAX) + ")";
  if (!fits(o.request_bytes) || !fits(o.segments)) {
    return Status::InvalidArgument("--view: --request (" + std::to_string(o.request_bytes) +
                                   ") and the segments (" + std::to_string(o.segments) + ")" +
                                   limit);
  }
  if (o.view == View::kVector) {
    const uint64_t stride = o.request_bytes * ranks;
    if (!fits(stride)) {
      return Status::InvalidArgument("--view vector: the stride, --request x " +
                                     std::to_string(ranks) + " ranks = " + std::to_string(stride) +
                                     " bytes," + limit);
    }
    return Status::Ok();
  }
  const TileGrid g = TileOf(ranks);
  const uint64_t rows = uint64_t{g.rows} * o.segments, cols = uint64_t{g.cols} * o.request_bytes;
  if (!fits(rows) || !fits(cols)) {
    return Status::InvalidArgument(
        "--view subarray: the array's " + std::to_string(rows) + " rows (segments x " +
        std::to_string(g.rows) + " tile rows) and " + std::to_string(cols) +
        " bytes a row (--request x " + std::to_string(g.cols) + " tile columns)" + limit);
  }
  return Status::Ok();
}

}  // namespace

// The table binds to `o`: parsing writes into it, ToJson reads it.
cli::OptionTable Table(Options* o) {
  cli::OptionTable t(
      "usage: iorelay-bench [--write] [--read] [--verify] [options]   (under mpirun)\n",
      "Neither --write nor --read: both. Sizes: K, M, G or KiB, MiB, GiB (1024-based),\n"
      "kB, MB, GB (1000-based).\n"
      "Exit status: 0 ok, 1 I/O error or wrong data, 2 usage.\n");
  t.Add(cli::Flag("write", &o->write, "the write phase"))
      .Add(cli::Flag("read", &o->read, "the read phase"))
      .Add(cli::Flag("verify", &o->verify, "check every word after the write phase"))
      .Add(cli::Choice("layout", &o->layout, workload::LayoutChoices(),
                       "file per process or one shared file (shared)"))
      .Add(cli::Choice("spatiality", &o->spatiality, workload::SpatialityChoices(),
                       "1D-strided: block = request (contiguous)"))
      .Add(cli::Bytes("request", "SIZE", &o->request_bytes, "bytes per pwrite/pread, t (64K)"))
      .Add(cli::Bytes("block", "SIZE", &o->block_bytes,
                      "per-rank block per segment, b (0: 16 requests)"))
      .Add(cli::Integer("segments", "N", &o->segments, 0, INT64_MAX,
                        "segments, s (0: strided 16, contiguous 1)"))
      .Add(cli::Bytes("total", "SIZE", &o->total_bytes,
                      "bytes of all ranks together, instead of b and s (0: none)"))
      .Add(cli::Seconds("stonewall", "SECONDS", &o->stonewall_s,
                        "each rank stops issuing requests after T s (0: none)"))
      .Add(cli::Flag("wearout", &o->wearout,
                     "then continue to the request count of the fastest rank"))
      .Add(cli::Flag("odirect", &o->odirect, "open with O_DIRECT (request a multiple of 4096)"))
      .Add(cli::Flag("fsync", &o->fsync, "fsync before close in the write phase"))
      .Add(cli::Integer("ranks-per-node", "R", &o->ranks_per_node, 1, UINT32_MAX,
                        "ranks per (virtual) node, for the nodes count (1)"))
      .Add(cli::Text("dir", "DIR", &o->dir, "files: DIR/NAME, or DIR/NAME.RANK for fpp (.)"))
      .Add(cli::Text("name", "NAME", &o->name, "file name (iorelay-bench.dat)"))
      .Add(cli::Integer("seed", "N", &o->seed, 0, INT64_MAX, "data-pattern seed (1)"))
      .Add(cli::Flag("keep", &o->keep, "keep the files (default: removed at the end)"))
      .Add(cli::Text("output", "FILE", &o->output, "JSON result to FILE (default: stdout)"))
      .Add(cli::Choice("api", &o->api, {{"posix", Api::kPosix}, {"mpiio", Api::kMpiio}},
                       "pwrite/pread, or MPI_File_write_at/read_at (posix)"))
      .Add(cli::Flag("collective", &o->collective,
                     "mpiio: collective MPI_File_write_at_all/read_at_all"))
      .Add(cli::TextList("hint", "KEY=VALUE", &o->hints, CheckHint,
                         "mpiio: a hint for MPI_File_open (repeatable): cb_nodes=2,\n"
                         "romio_cb_write=enable, cb_buffer_size=16777216, striping_factor=4"))
      .Add(cli::Choice(
          "view", &o->view,
          {{"none", View::kNone}, {"vector", View::kVector}, {"subarray", View::kSubarray}},
          "mpiio, shared, strided: a file view; each call moves "
          "--requests-per-call requests (none)"))
      .Add(cli::Integer("requests-per-call", "N", &o->requests_per_call, 0, INT32_MAX,
                        "with --view: requests per MPI call (0: all of a rank's)"));
  return t;
}

std::string Usage() {
  Options o;
  return Table(&o).Help();
}

Result<uint64_t> ParseSize(const std::string& text) { return units::ParseBytes(text); }

const char* ApiName(Api api) { return api == Api::kMpiio ? "mpiio" : "posix"; }

const char* ViewName(View view) {
  switch (view) {
    case View::kNone:
      return "none";
    case View::kVector:
      return "vector";
    case View::kSubarray:
      return "subarray";
  }
  return "?";
}

Result<Options> ParseOptions(const std::vector<std::string>& args, uint32_t ranks) {
  Options o;
  Result<cli::ParseOutcome> parsed = Table(&o).Parse(args);
  if (!parsed.ok()) return parsed.status();
  o.help = parsed->help;
  if (parsed->print_config) o.printed_config = Table(&o).ToJson();  // as given, before derivation
  if (o.help || parsed->print_config) return o;
  if (!o.write && !o.read) o.write = o.read = true;
  if (o.name.empty() || o.name.find('/') != std::string::npos) {
    return Status::InvalidArgument("--name must be a plain file name");
  }
  IORELAY_RETURN_IF_ERROR(CheckApi(o));
  IORELAY_RETURN_IF_ERROR(Derive(o, ranks));
  IORELAY_RETURN_IF_ERROR(CheckView(o, ranks));
  return o;
}

}  // namespace iorelay::bench
