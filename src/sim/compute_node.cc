// One actor per rank, so that the I/O node sees per-rank requests exactly as the daemon does.
#include "sim/compute_node.h"

#include <algorithm>
#include <functional>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <string>

#include "sim/io_request.h"

namespace iorelay::sim {

namespace sg4 = simgrid::s4u;

namespace {

// Direct access through storage gateway (k mod gateways) of the topology: the request crosses
// the topology to the gateway's node `front`, `call(via, front)` runs from the gateway's storage
// side `via` and returns the bytes to carry back, and the reply carries them. Requests take the
// gateways in turn, as Lustre's clients spread their RPCs over the LNET routers.
template <typename Call>
uint64_t ThroughGateway(sg4::Host* host, const RankTarget& target, uint64_t k, Call call) {
  const size_t g = k % target.gateway_front->size();
  sg4::Host* front = (*target.gateway_front)[g];
  sg4::Comm::sendto(host, front, kMessageHeaderBytes);
  const uint64_t back_bytes = call((*target.gateway_storage)[g], front);
  sg4::Comm::sendto(front, host, kMessageHeaderBytes + back_bytes);
  return back_bytes;
}

// A rank's own file-system call (direct access); returns the bytes done.
uint64_t DirectCall(const IoRequest& r, uint64_t i, sg4::Host* host, const RankTarget& target) {
  if (target.gateway_front == nullptr) {
    return target.storage->Call(host, r.file, r.write, r.offset, r.length);
  }
  uint64_t done = 0;
  ThroughGateway(host, target, r.rank + i, [&](sg4::Host* via, sg4::Host* front) {
    // A write's data cross to the gateway once the client holds its locks, as a Lustre client
    // sends its bulk data under its lock.
    const std::function<void()> data_in = [&] { sg4::Comm::sendto(host, front, r.length); };
    done = target.storage->Call(host, r.file, r.write, r.offset, r.length, via,
                                r.write ? &data_in : nullptr);
    return r.write ? 0 : done;
  });
  return done;
}

}  // namespace

void MetadataCall(uint32_t rank, MetadataOp op, sg4::Host* host, const RankTarget& target,
                  sg4::Mailbox* reply, uint64_t directory, uint64_t file) {
  if (!target.storage->has_metadata()) return;
  // A metadata call pays the processor as a data request without data does.
  if (target.ionode == nullptr) target.cpu->DirectCall();
  if (target.ionode == nullptr && target.gateway_front != nullptr) {
    ThroughGateway(host, target, rank, [&](sg4::Host* via, sg4::Host*) {
      target.storage->Metadata(host, via, op, directory, file);
      return uint64_t{0};
    });
    return;
  }
  if (target.ionode == nullptr) {
    target.storage->Metadata(host, nullptr, op, directory, file);
    return;
  }
  IoRequest call;
  call.rank = rank;
  call.metadata = true;
  call.metadata_op = op;
  call.directory = directory;
  call.file = file;
  call.reply_to = reply;
  target.cpu->ForwardRequest(0);
  target.ionode->put(&call, kMessageHeaderBytes);
  reply->get<IoRequest>();
}

void DataCall(IoRequest& r, uint64_t i, sg4::Host* host, const RankTarget& target) {
  if (target.ionode != nullptr) {
    // The client copies a write's data in before sending and a read's out after the reply.
    if (r.write) target.cpu->ForwardRequest(r.length);
    target.ionode->put(&r, kMessageHeaderBytes + (r.write ? r.length : 0));
    IoRequest* back = r.reply_to->get<IoRequest>();
    (void)back;  // the same message, answered
    if (!r.write) target.cpu->ForwardRequest(r.bytes_done);
  } else {
    target.cpu->DirectCall();
    r.bytes_done = DirectCall(r, i, host, target);
  }
}

namespace {

void RankLoop(const Pattern& pattern, uint32_t rank, sg4::Host* host, RankTarget target,
              double start_s, RankResult* out, const std::function<void()>* finished) {
  if (start_s > 0) sg4::this_actor::sleep_until(start_s);
  sg4::Mailbox* reply = sg4::Mailbox::by_name("r" + std::to_string(target.rank_base + rank));
  // The open (file per process: the create) before the first request; the files of a pattern
  // are in one directory.
  const uint64_t file = target.file_base + DataRequest(pattern, rank, 0, reply).file;
  const MetadataOp open =
      pattern.spec.layout == Layout::kFilePerProcess ? MetadataOp::kCreate : MetadataOp::kOpen;
  MetadataCall(rank, open, host, target, reply, /*directory=*/0, file);
  // Issues requests out->requests .. limit - 1; with `timed`, stops at the stonewall.
  auto issue = [&](uint64_t limit, bool timed) {
    for (uint64_t i = out->requests;
         i < limit && (!timed || pattern.BeforeStonewall(sg4::Engine::get_clock())); ++i) {
      IoRequest r = DataRequest(pattern, rank, i, reply);
      r.rank += target.rank_base;
      r.file += target.file_base;
      r.app = target.app;
      DataCall(r, i, host, target);
      ++out->requests;
      out->bytes += r.bytes_done;
      if (r.error != 0) ++out->errors;
    }
  };
  const uint64_t n = pattern.IssuedPerRank();
  issue(n, /*timed=*/true);
  if (target.wear_out != nullptr) {
    issue(std::min(n, target.wear_out->Agree(out->requests)), /*timed=*/false);
  }
  // The close: the bench's phase ends after it.
  MetadataCall(rank, MetadataOp::kClose, host, target, reply, /*directory=*/0, file);
  out->end_s = sg4::Engine::get_clock();
  (*finished)();
}

}  // namespace

void StartRank(const Pattern& pattern, uint32_t rank, sg4::Host* host, RankTarget target,
               double start_s, RankResult* out, const std::function<void()>* finished) {
  sg4::Actor::create("rank" + std::to_string(rank), host,
                     [&pattern, rank, host, target, start_s, out, finished] {
                       RankLoop(pattern, rank, host, target, start_s, out, finished);
                     });
}

}  // namespace iorelay::sim
