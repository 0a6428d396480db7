// Command-line options of iorelay-bench, parsed without exceptions into one struct with every
// derived size filled in, so the rest of the program never re-checks them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "workload/pattern.h"

namespace iorelay::bench {

using workload::Layout;
using workload::Spatiality;
// How the requests reach the file: plain POSIX calls, or MPI-IO (the MPI library's own file layer,
// ROMIO or OpenMPI's OMPIO), independent or collective.
enum class Api { kPosix, kMpiio };
// An MPI file view (mpiio, shared file, strided pattern): each MPI call moves several of a rank's
// requests through MPI_File_set_view's filetype instead of one request at an explicit offset.
// vector: MPI_Type_vector, request i of rank r at (i * ranks + r) * request, as the strided
// pattern; subarray: MPI_Type_create_subarray, the file a 2D array of tiles (layout.h TileOf),
// request i of rank r row i of its tile.
enum class View { kNone, kVector, kSubarray };

// The access pattern (src/workload: its sizes derived by ParseOptions) and how to run it.
struct Options : workload::PatternSpec {
  bool fsync = false;  // fsync before close in the write phase (timed)
  bool write = false;
  bool read = false;
  bool verify = false;  // extra untimed-for-bandwidth check pass after the write phase
  bool keep = false;    // keep the files at the end
  Api api = Api::kPosix;
  bool collective = false;         // mpiio: MPI_File_write_at_all/read_at_all (else write_at)
  std::vector<std::string> hints;  // mpiio: "KEY=VALUE" set in the MPI_Info of MPI_File_open
  View view = View::kNone;
  uint64_t requests_per_call = 0;  // with a view: requests per MPI call (0: all of them)
  uint32_t ranks_per_node = 1;
  uint64_t seed = 1;
  std::string dir = ".";
  std::string name = "iorelay-bench.dat";
  std::string output;  // JSON file; empty = stdout
  bool help = false;
  // With --print-config: the options as given (0 = derived), the form --config reads back.
  nlohmann::json printed_config;
};

std::string Usage();

// Parses argv for `ranks` processes with the option table (options.cc; rules in
// common/option_table.h). Sizes follow common/units.h (K = KiB = 1024, kB = 1000). Fills
// block_bytes and segments from --total or the defaults; checks every constraint. With --help or
// --print-config nothing is derived or checked beyond syntax.
Result<Options> ParseOptions(const std::vector<std::string>& args, uint32_t ranks);

// "64K" → 65536, "64kB" → 64000 (common/units.h); fails on junk or overflow.
Result<uint64_t> ParseSize(const std::string& text);

const char* ApiName(Api api);
const char* ViewName(View view);

}  // namespace iorelay::bench
