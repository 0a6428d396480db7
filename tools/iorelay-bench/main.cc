// iorelay-bench: a thin main over the benchmark library. Parses options, runs the write,
// verify and read phases, and has rank 0 print the JSON result and a summary line.
#include <mpi.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "common/version_flag.h"
#include "layout.h"
#include "options.h"
#include "phase.h"
#include "report.h"

namespace {

using iorelay::bench::Op;
using iorelay::bench::Options;
using iorelay::bench::RankResult;

void PrintError(uint32_t rank, const std::string& message) {
  if (!message.empty()) std::fprintf(stderr, "iorelay-bench rank %u: %s\n", rank, message.c_str());
}

// Runs one phase on every rank, reports local errors, and appends the phase at rank 0.
RankResult Phase(const Options& o, Op op, uint32_t rank, uint32_t ranks, uint64_t limit,
                 const std::string& setup_error, nlohmann::json& phases) {
  RankResult mine = iorelay::bench::RunPhase(o, op, rank, ranks, limit);
  if (!setup_error.empty()) {
    ++mine.errors;
    if (mine.first_error.empty()) mine.first_error = setup_error;
  }
  PrintError(rank, mine.first_error);
  auto all = iorelay::bench::GatherResults(mine, rank, ranks);
  if (rank == 0) {
    phases.push_back(iorelay::bench::PhaseJson(op, all));
    if (o.api == iorelay::bench::Api::kMpiio) phases.back()["mpiio_info"] = mine.reported_hints;
  }
  return mine;
}

// Rank 0: completes, prints and writes the result. Returns whether the run was clean.
bool Publish(const Options& o, uint32_t ranks, nlohmann::json phases) {
  uint64_t wrong = 0, errors = 0;
  for (const auto& p : phases) {
    wrong += p["wrong_words"].get<uint64_t>();
    errors += p["errors"].get<uint64_t>();
  }
  nlohmann::json result = {
      {"schema", "iorelay-bench"},
      {"schema_version", iorelay::bench::kSchemaVersion},
      {"config", iorelay::bench::ConfigJson(o, ranks)},
      {"phases", std::move(phases)},
      {"wrong_words", wrong},
      {"errors", errors},
      {"ok", wrong == 0 && errors == 0},
  };
  const std::string text = result.dump(2) + "\n";
  bool written = true;
  if (o.output.empty()) {
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
  } else {
    std::ofstream out(o.output);
    out << text;
    out.close();
    written = static_cast<bool>(out);
    if (!written) std::fprintf(stderr, "iorelay-bench: cannot write %s\n", o.output.c_str());
  }
  std::fprintf(stderr, "%s\n", iorelay::bench::SummaryLine(result).c_str());
  return result["ok"].get<bool>() && written;
}

int Main(uint32_t rank, uint32_t ranks, const std::vector<std::string>& args) {
  auto parsed = iorelay::bench::ParseOptions(args, ranks);
  if (!parsed.ok() || parsed->help) {
    if (rank == 0) {
      if (!parsed.ok())
        std::fprintf(stderr, "iorelay-bench: %s\n", parsed.status().message().c_str());
      std::fputs(iorelay::bench::Usage().c_str(), parsed.ok() ? stdout : stderr);
    }
    return parsed.ok() ? 0 : 2;
  }
  if (!parsed->printed_config.is_null()) {
    if (rank == 0) std::printf("%s\n", parsed->printed_config.dump(2).c_str());
    return 0;
  }
  const Options& o = *parsed;
  const uint64_t planned = iorelay::bench::ShapeOf(o).RequestsPerRank();
  nlohmann::json phases = nlohmann::json::array();
  uint64_t written = planned;
  if (o.write) {
    const std::string prep = iorelay::bench::PrepareFiles(o, rank);
    const uint64_t done = Phase(o, Op::kWrite, rank, ranks, planned, prep, phases).requests;
    if (!o.collective) written = done;  // collective reads must match on every rank: all planned
  }
  if (o.verify) Phase(o, Op::kVerify, rank, ranks, written, "", phases);
  if (o.read) Phase(o, Op::kRead, rank, ranks, written, "", phases);
  if (!o.keep) PrintError(rank, iorelay::bench::RemoveFiles(o, rank));
  int ok = rank == 0 ? Publish(o, ranks, std::move(phases)) : 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Before MPI_Init, so that `iorelay-bench --version` works without a launcher.
  if (iorelay::PrintVersionIfAsked(argc, argv, "iorelay-bench")) return 0;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int status = Main(static_cast<uint32_t>(rank), static_cast<uint32_t>(size),
                          std::vector<std::string>(argv + 1, argv + argc));
  MPI_Finalize();
  return status;
}
