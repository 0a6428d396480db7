// The node's loop waits on two things at once: the reply mailbox (a rank's request answered, so
// that rank's next one becomes ready) and the one request message being sent.
#include "sim/node_issuer.h"

#include <algorithm>
#include <deque>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/plan.h"
#include "sim/io_request.h"

namespace iorelay::sim {

namespace sg4 = simgrid::s4u;

namespace {

// Every rank of the node opens its file before its first request, and closes it once the node's
// ranks are all done: one message per rank, or one for all of them when aggregating; returns
// when every call is answered.
void MetadataCalls(const Pattern& pattern, uint32_t first_rank, uint32_t count,
                   sg4::Mailbox* ionode, sg4::Mailbox* replies, bool aggregate) {
  std::vector<IoRequest> calls(count);
  for (uint32_t local = 0; local < count; ++local) {
    IoRequest& c = calls[local];
    c.rank = first_rank + local;
    c.file = DataRequest(pattern, c.rank, 0, replies).file;  // in directory 0
    c.metadata = true;
    c.reply_to = replies;
    if (aggregate && local + 1 < count) c.next_in_message = &calls[local + 1];
  }
  if (aggregate) {
    ionode->put(&calls[0], kMessageHeaderBytes * count);
  } else {
    for (IoRequest& c : calls) ionode->put(&c, kMessageHeaderBytes);
  }
  for (uint32_t k = 0; k < count; ++k) replies->get<IoRequest>();
}

void NodeLoop(const Pattern& pattern, uint32_t node, uint32_t first_rank, uint32_t count,
              sg4::Mailbox* ionode, double start_s, bool opens, WearOut* wear_out,
              std::vector<RankResult>* out, const std::function<void()>* finished) {
  if (start_s > 0) sg4::this_actor::sleep_until(start_s);
  sg4::Mailbox* replies = sg4::Mailbox::by_name("n" + std::to_string(node));
  if (opens) MetadataCalls(pattern, first_rank, count, ionode, replies, /*aggregate=*/false);
  const uint64_t per_rank = pattern.IssuedPerRank();
  std::vector<IoRequest> current(count);  // each rank's request in flight
  std::vector<uint64_t> issued(count, 0);
  std::deque<uint32_t> ready;  // ranks (local index) whose next request waits for the NIC
  auto prepare = [&](uint32_t local) {
    current[local] = DataRequest(pattern, first_rank + local, issued[local]++, replies);
    ready.push_back(local);
  };
  // Runs the node's ranks until each has issued `limit` requests (with `timed`, or passed the
  // stonewall) and had them answered; calls `stopped` for each rank as it stops.
  auto run = [&](uint64_t limit, bool timed, const std::function<void(uint32_t)>& stopped) {
    uint32_t ranks_left = 0;
    for (uint32_t local = 0; local < count; ++local) {
      if (issued[local] < limit) {
        prepare(local);
        ++ranks_left;
      } else {
        stopped(local);
      }
    }
    if (ranks_left == 0) return;
    sg4::CommPtr sending;
    IoRequest* answered = nullptr;
    sg4::CommPtr receiving = replies->get_async<IoRequest>(&answered);
    while (ranks_left > 0) {
      if (sending == nullptr && !ready.empty()) {
        IoRequest& r = current[ready.front()];
        ready.pop_front();
        sending = ionode->put_async(&r, kMessageHeaderBytes + (r.write ? r.length : 0));
      }
      std::vector<sg4::CommPtr> comms = {receiving};
      if (sending != nullptr) comms.push_back(sending);
      const ssize_t done = sg4::Comm::wait_any(comms);
      if (done == 1) {
        sending = nullptr;
        continue;
      }
      const uint32_t local = answered->rank - first_rank;
      RankResult& result = (*out)[answered->rank];
      ++result.requests;
      result.bytes += answered->bytes_done;
      if (answered->error != 0) ++result.errors;
      if (issued[local] < limit && (!timed || pattern.BeforeStonewall(sg4::Engine::get_clock()))) {
        prepare(local);
      } else {
        --ranks_left;
        stopped(local);
      }
      if (ranks_left > 0) receiving = replies->get_async<IoRequest>(&answered);
    }
  };
  // A rank ends at its last reply; with metadata calls, after the node's closes (the last rank's
  // `finished` may end the I/O nodes, so it comes after them).
  const std::function<void(uint32_t)> end = [&](uint32_t local) {
    (*out)[first_rank + local].end_s = sg4::Engine::get_clock();
    if (!opens) (*finished)();
  };
  if (wear_out == nullptr) {
    run(per_rank, /*timed=*/true, end);
  } else {
    run(per_rank, /*timed=*/true, [](uint32_t) {});
    const uint64_t most = *std::max_element(issued.begin(), issued.end());
    run(std::min(per_rank, wear_out->Agree(most)), /*timed=*/false, end);
  }
  if (!opens) return;
  MetadataCalls(pattern, first_rank, count, ionode, replies, /*aggregate=*/false);
  for (uint32_t local = 0; local < count; ++local) {
    (*out)[first_rank + local].end_s = sg4::Engine::get_clock();
    (*finished)();
  }
}

// Intra-node aggregation's one sender writes the gathered buffer: runs of the step's requests
// that continue each other in one file become one request. Fills `sent` (the requests to send)
// and `members` (for each, its first rank-local index and its per-rank lengths).
void Coalesce(const std::vector<IoRequest>& step, std::vector<IoRequest>* sent,
              std::vector<std::pair<uint32_t, std::vector<uint64_t>>>* members) {
  sent->clear();
  members->clear();
  for (uint32_t local = 0; local < step.size(); ++local) {
    const IoRequest& r = step[local];
    if (!sent->empty()) {
      IoRequest& last = sent->back();
      // (Only what the daemon would merge: one file, direction, merge class and application,
      // positional, not O_APPEND.)
      if (last.file == r.file && last.write == r.write && last.merge_class == r.merge_class &&
          last.app == r.app && last.positional && r.positional && !last.append && !r.append &&
          last.offset + last.length == r.offset) {
        last.length += r.length;
        members->back().second.push_back(r.length);
        continue;
      }
    }
    sent->push_back(r);
    members->push_back({local, {r.length}});
  }
  for (size_t k = 0; k < sent->size(); ++k) {
    (*sent)[k].next_in_message = k + 1 < sent->size() ? &(*sent)[k + 1] : nullptr;
  }
}

// One step of intra-node aggregation: request i of every rank of the node, gathered into one
// message, coalesced, and each rank answered its share.
void Step(const Pattern& pattern, uint32_t first_rank, uint32_t count, uint64_t i,
          sg4::Mailbox* ionode, sg4::Mailbox* replies, std::vector<IoRequest>* step,
          std::vector<IoRequest>* sent,
          std::vector<std::pair<uint32_t, std::vector<uint64_t>>>* members,
          std::vector<dispatch::Share>* shares, std::vector<RankResult>* out) {
  for (uint32_t local = 0; local < count; ++local) {
    (*step)[local] = DataRequest(pattern, first_rank + local, i, replies);
  }
  Coalesce(*step, sent, members);
  uint64_t bytes = 0;
  for (const IoRequest& r : *sent) bytes += kMessageHeaderBytes + (r.write ? r.length : 0);
  ionode->put(&(*sent)[0], bytes);
  for (size_t k = 0; k < sent->size(); ++k) {
    const IoRequest* answered = replies->get<IoRequest>();
    const auto& [first_local, lengths] = (*members)[answered - sent->data()];
    // Each rank's share of the gathered write, as the daemon splits a merged call.
    dispatch::SplitResult(answered->error != 0
                              ? Result<size_t>(Status::IOError("aggregated request failed"))
                              : Result<size_t>(static_cast<size_t>(answered->bytes_done)),
                          lengths, shares);
    for (size_t m = 0; m < lengths.size(); ++m) {
      RankResult& result = (*out)[first_rank + first_local + m];
      ++result.requests;
      result.bytes += (*shares)[m].bytes;
      if (answered->error != 0 || (*shares)[m].error != 0) ++result.errors;
    }
  }
}

void AggregatingNodeLoop(const Pattern& pattern, uint32_t node, uint32_t first_rank, uint32_t count,
                         sg4::Mailbox* ionode, double start_s, bool opens, WearOut* wear_out,
                         std::vector<RankResult>* out, const std::function<void()>* finished) {
  if (start_s > 0) sg4::this_actor::sleep_until(start_s);
  sg4::Mailbox* replies = sg4::Mailbox::by_name("n" + std::to_string(node));
  if (opens) MetadataCalls(pattern, first_rank, count, ionode, replies, /*aggregate=*/true);
  std::vector<IoRequest> step(count);
  std::vector<IoRequest> sent;
  std::vector<std::pair<uint32_t, std::vector<uint64_t>>> members;
  std::vector<dispatch::Share> shares;
  // Steps from `i` up to `limit` (with `timed`, none after the stonewall).
  uint64_t i = 0;
  auto steps = [&](uint64_t limit, bool timed) {
    for (; i < limit && (!timed || pattern.BeforeStonewall(sg4::Engine::get_clock())); ++i) {
      Step(pattern, first_rank, count, i, ionode, replies, &step, &sent, &members, &shares, out);
    }
  };
  steps(pattern.IssuedPerRank(), /*timed=*/true);
  if (wear_out != nullptr) steps(std::min(pattern.IssuedPerRank(), wear_out->Agree(i)), false);
  if (opens) {  // the closes
    MetadataCalls(pattern, first_rank, count, ionode, replies, /*aggregate=*/true);
  }
  for (uint32_t local = 0; local < count; ++local) {
    (*out)[first_rank + local].end_s = sg4::Engine::get_clock();
    (*finished)();
  }
}
}  // namespace

void StartNodeIssuer(const Pattern& pattern, uint32_t node, uint32_t first_rank, uint32_t count,
                     sg4::Host* host, sg4::Mailbox* ionode, double start_s, bool aggregate,
                     bool opens, WearOut* wear_out, std::vector<RankResult>* out,
                     const std::function<void()>* finished) {
  sg4::Actor::create("node" + std::to_string(node), host,
                     [&pattern, node, first_rank, count, ionode, start_s, aggregate, opens,
                      wear_out, out, finished] {
                       if (aggregate) {
                         AggregatingNodeLoop(pattern, node, first_rank, count, ionode, start_s,
                                             opens, wear_out, out, finished);
                       } else {
                         NodeLoop(pattern, node, first_rank, count, ionode, start_s, opens,
                                  wear_out, out, finished);
                       }
                     });
}

}  // namespace iorelay::sim
