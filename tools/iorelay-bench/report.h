// Gathers the ranks' results of a phase at rank 0 and turns them into the documented JSON
// result (docs/exploration.md, "iorelay-bench JSON") and the one-line summary.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "options.h"
#include "phase.h"

namespace iorelay::bench {

inline constexpr int kSchemaVersion = 1;

// Collective: every rank passes its own result; rank 0 gets all of them (in rank order), the
// others an empty vector. Error messages stay with their rank (printed there).
std::vector<RankResult> GatherResults(const RankResult& mine, uint32_t rank, uint32_t ranks);

// One phase object: operation, bytes, time of the slowest rank, bandwidth, per-rank arrays.
nlohmann::json PhaseJson(Op op, const std::vector<RankResult>& ranks);

// The effective configuration (defaults and derived sizes filled in).
nlohmann::json ConfigJson(const Options& o, uint32_t ranks);

// "iorelay-bench shared/strided 4 ranks t=64KiB: write 123.4 MiB/s ... ok" for stderr.
std::string SummaryLine(const nlohmann::json& result);

}  // namespace iorelay::bench
