// One actor per rank, so that the I/O node sees per-rank requests exactly as the daemon does.
#include "sim/compute_node.h"

#include <algorithm>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <string>

#include "sim/io_request.h"

namespace iorelay::sim {

namespace sg4 = simgrid::s4u;

namespace {

// The rank's open (or create) before its first request, or its close after its last: at the
// metadata server, through the rank's I/O node or directly.
void MetadataCall(uint32_t rank, sg4::Host* host, const RankTarget& target, sg4::Mailbox* reply) {
  if (!target.storage->has_metadata()) return;
  if (target.ionode == nullptr) {
    target.storage->Metadata(host);
    return;
  }
  IoRequest call;
  call.rank = rank;
  call.metadata = true;
  call.reply_to = reply;
  target.ionode->put(&call, kMessageHeaderBytes);
  reply->get<IoRequest>();
}

void RankLoop(const Pattern& pattern, uint32_t rank, sg4::Host* host, RankTarget target,
              double start_s, RankResult* out, const std::function<void()>* finished) {
  if (start_s > 0) sg4::this_actor::sleep_until(start_s);
  sg4::Mailbox* reply = sg4::Mailbox::by_name("r" + std::to_string(rank));
  MetadataCall(rank, host, target, reply);  // open
  // Issues requests out->requests .. limit - 1; with `timed`, stops at the stonewall.
  auto issue = [&](uint64_t limit, bool timed) {
    for (uint64_t i = out->requests;
         i < limit && (!timed || pattern.BeforeStonewall(sg4::Engine::get_clock())); ++i) {
      IoRequest r = DataRequest(pattern, rank, i, reply);
      if (target.ionode != nullptr) {
        // The client copies a write's data in before sending and a read's out after the reply.
        if (r.write) target.cpu->ForwardRequest(r.length);
        target.ionode->put(&r, kMessageHeaderBytes + (r.write ? r.length : 0));
        IoRequest* back = reply->get<IoRequest>();
        (void)back;  // the same message, answered
        if (!r.write) target.cpu->ForwardRequest(r.bytes_done);
      } else {
        target.cpu->DirectCall();
        r.bytes_done = target.storage->Call(host, r.file, r.write, r.offset, r.length);
      }
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
  MetadataCall(rank, host, target, reply);  // close: the bench's phase ends after it
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
