#include "sim/metadata_workload.h"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <string>

#include "sim/io_request.h"

namespace iorelay::sim {

namespace sg4 = simgrid::s4u;

const char* MdtestPhaseName(int phase) {
  static constexpr const char* kNames[kMdtestPhases] = {"File creation", "File stat", "File read",
                                                        "File removal"};
  return kNames[phase];
}

namespace {

void MdtestLoop(const MdtestSpec& spec, uint32_t rank, sg4::Host* host, RankTarget target,
                double start_s, sg4::BarrierPtr barrier, MdtestTimes* times, RankResult* out,
                const std::function<void()>* finished) {
  if (start_s > 0) sg4::this_actor::sleep_until(start_s);
  sg4::Mailbox* reply = sg4::Mailbox::by_name("r" + std::to_string(rank));
  const uint64_t n = spec.files_per_rank;
  const uint64_t directory = spec.shared_directory ? 0 : rank + 1;
  // File i of this rank (its name in the directory, and its data's file).
  auto file = [&](uint64_t i) { return 1 + rank * n + i; };
  auto metadata = [&](MetadataOp op, uint64_t i) {
    MetadataCall(rank, op, host, target, reply, directory, file(i));
    ++out->requests;
  };
  // The W bytes of file i, written at its create or read at its read.
  auto data = [&](uint64_t i, bool write) {
    if (spec.bytes == 0) return;
    IoRequest r;
    r.rank = rank;
    r.file = file(i);  // every file its own, spread over the targets
    r.write = write;
    r.length = spec.bytes;
    r.index = i;
    r.reply_to = reply;
    DataCall(r, i, host, target);
    ++out->requests;
    out->bytes += r.bytes_done;
    if (r.error != 0) ++out->errors;
  };
  for (int phase = 0; phase < kMdtestPhases; ++phase) {
    barrier->wait();
    if (rank == 0) times->start_s[phase] = sg4::Engine::get_clock();
    for (uint64_t i = 0; i < n; ++i) {
      switch (static_cast<MdtestPhase>(phase)) {
        case MdtestPhase::kCreate:
          metadata(MetadataOp::kCreate, i);
          data(i, /*write=*/true);
          metadata(MetadataOp::kClose, i);
          break;
        case MdtestPhase::kStat:
          metadata(MetadataOp::kStat, i);
          break;
        case MdtestPhase::kRead:
          metadata(MetadataOp::kOpen, i);
          data(i, /*write=*/false);
          metadata(MetadataOp::kClose, i);
          break;
        case MdtestPhase::kRemove:
          metadata(MetadataOp::kRemove, i);
          break;
      }
    }
    barrier->wait();
    if (rank == 0) times->end_s[phase] = sg4::Engine::get_clock();
  }
  out->end_s = sg4::Engine::get_clock();
  (*finished)();
}

}  // namespace

void StartMdtestRank(const MdtestSpec& spec, uint32_t rank, sg4::Host* host, RankTarget target,
                     double start_s, sg4::BarrierPtr barrier, MdtestTimes* times, RankResult* out,
                     const std::function<void()>* finished) {
  sg4::Actor::create("mdtest" + std::to_string(rank), host,
                     [&spec, rank, host, target, start_s, barrier, times, out, finished] {
                       MdtestLoop(spec, rank, host, target, start_s, barrier, times, out, finished);
                     });
}

}  // namespace iorelay::sim
