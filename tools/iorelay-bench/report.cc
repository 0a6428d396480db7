// Builds the JSON result and the summary line from the gathered per-rank results.
#include "report.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>

#include "iorelay/version.h"
#include "layout.h"
#include "proto/wire.h"

namespace iorelay::bench {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr int kCounters = 5;  // requests, bytes, wrong_words, errors, stonewalled

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string Size(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024 && u < 3 && static_cast<uint64_t>(v) % 1024 == 0) v /= 1024, ++u;
  char text[32];
  std::snprintf(text, sizeof text, "%g%s", v, units[u]);
  return text;
}

// The first line of MPI_Get_library_version ("Open MPI v4.1.4, ...", "MPICH Version: 4.0.2").
std::string MpiLibrary() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<size_t>(length));
  return version.substr(0, version.find('\n'));
}

}  // namespace

std::vector<RankResult> GatherResults(const RankResult& mine, uint32_t rank, uint32_t ranks) {
  const uint64_t counters[kCounters] = {mine.requests, mine.bytes, mine.wrong_words, mine.errors,
                                        mine.stonewalled ? 1u : 0u};
  std::vector<uint64_t> all_counters(rank == 0 ? kCounters * ranks : 0);
  std::vector<double> all_times(rank == 0 ? ranks : 0);
  MPI_Gather(counters, kCounters, MPI_UINT64_T, all_counters.data(), kCounters, MPI_UINT64_T, 0,
             MPI_COMM_WORLD);
  double time_s = mine.time_s;
  MPI_Gather(&time_s, 1, MPI_DOUBLE, all_times.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<RankResult> out;
  if (rank != 0) return out;
  out.resize(ranks);
  for (uint32_t r = 0; r < ranks; ++r) {
    const uint64_t* c = &all_counters[kCounters * r];
    out[r].requests = c[0];
    out[r].bytes = c[1];
    out[r].wrong_words = c[2];
    out[r].errors = c[3];
    out[r].stonewalled = c[4] != 0;
    out[r].time_s = all_times[r];
  }
  return out;
}

nlohmann::json PhaseJson(Op op, const std::vector<RankResult>& ranks) {
  std::vector<double> times;
  std::vector<uint64_t> bytes, requests, wrong, errors;
  uint64_t total_bytes = 0, total_requests = 0, total_wrong = 0, total_errors = 0;
  int stonewalled = 0;
  for (const RankResult& r : ranks) {
    times.push_back(r.time_s);
    bytes.push_back(r.bytes);
    requests.push_back(r.requests);
    wrong.push_back(r.wrong_words);
    errors.push_back(r.errors);
    total_bytes += r.bytes;
    total_requests += r.requests;
    total_wrong += r.wrong_words;
    total_errors += r.errors;
    stonewalled += r.stonewalled;
  }
  const double slowest = times.empty() ? 0 : *std::max_element(times.begin(), times.end());
  nlohmann::json j;
  j["operation"] = OpName(op);
  j["bytes"] = total_bytes;
  j["requests"] = total_requests;
  j["time_s"] = slowest;
  j["bandwidth_mib_s"] = slowest > 0 ? static_cast<double>(total_bytes) / kMiB / slowest : 0.0;
  j["rank_time_s"] = {{"min", times.empty() ? 0 : *std::min_element(times.begin(), times.end())},
                      {"median", Median(times)},
                      {"max", slowest}};
  j["rank_times_s"] = times;
  j["rank_bytes"] = bytes;
  j["rank_requests"] = requests;
  j["stonewalled_ranks"] = stonewalled;
  j["wrong_words"] = total_wrong;
  j["rank_wrong_words"] = wrong;
  j["errors"] = total_errors;
  j["rank_errors"] = errors;
  return j;
}

nlohmann::json ConfigJson(const Options& o, uint32_t ranks) {
  return {
      {"iorelay_version", IORELAY_VERSION},
      {"protocol_version", proto::kVersion},
      {"layout", LayoutName(o.layout)},
      {"api", ApiName(o.api)},
      {"collective", o.collective},
      {"hints", o.hints},
      {"view", ViewName(o.view)},
      {"requests_per_call", o.requests_per_call},
      {"mpi_library", MpiLibrary()},
      {"spatiality", SpatialityName(o.spatiality)},
      {"processes", ranks},
      {"ranks_per_node", o.ranks_per_node},
      {"nodes", NodeCount(o, ranks)},
      {"request_bytes", o.request_bytes},
      {"block_bytes", o.block_bytes},
      {"segments", o.segments},
      {"requests_per_rank", ShapeOf(o).RequestsPerRank()},
      {"planned_bytes", ShapeOf(o).RequestsPerRank() * o.request_bytes * ranks},
      {"stonewall_s", o.stonewall_s},
      {"wearout", o.wearout},
      {"odirect", o.odirect},
      {"fsync", o.fsync},
      {"write", o.write},
      {"read", o.read},
      {"verify", o.verify},
      {"keep", o.keep},
      {"seed", o.seed},
      {"dir", o.dir},
      {"name", o.name},
  };
}

std::string SummaryLine(const nlohmann::json& result) {
  const auto& c = result["config"];
  char head[256];
  const std::string api =
      c["api"] == "mpiio" ? (c["collective"].get<bool>() ? " mpiio-collective" : " mpiio") : "";
  std::snprintf(head, sizeof head, "iorelay-bench %s/%s%s %d ranks (%d nodes) t=%s:",
                c["layout"].get<std::string>().c_str(), c["spatiality"].get<std::string>().c_str(),
                api.c_str(), c["processes"].get<int>(), c["nodes"].get<int>(),
                Size(c["request_bytes"].get<uint64_t>()).c_str());
  std::string line = head;
  for (const auto& p : result["phases"]) {
    char part[160];
    std::snprintf(part, sizeof part, " %s %.1f MiB/s (%s in %.3f s)",
                  p["operation"].get<std::string>().c_str(), p["bandwidth_mib_s"].get<double>(),
                  Size(p["bytes"].get<uint64_t>()).c_str(), p["time_s"].get<double>());
    line += part;
  }
  char tail[96];
  std::snprintf(tail, sizeof tail, "; %s (%llu wrong words, %llu errors)",
                result["ok"].get<bool>() ? "ok" : "FAILED",
                static_cast<unsigned long long>(result["wrong_words"].get<uint64_t>()),
                static_cast<unsigned long long>(result["errors"].get<uint64_t>()));
  return line + tail;
}

}  // namespace iorelay::bench
