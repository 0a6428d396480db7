// One actor per compute node issuing the requests of all its ranks, for runs where an actor per
// rank costs too much. The I/O node still sees per-rank requests, each rank in closed loop (its
// next request when its previous one is answered), but the node's NIC sends one request message
// at a time, in the order the ranks became ready: the node has one flow on the network instead
// of one per rank, which is what SimGrid's bandwidth sharing pays for.
#pragma once

#include <cstdint>
#include <functional>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <vector>

#include "sim/compute_node.h"
#include "sim/workload_pattern.h"

namespace iorelay::sim {

// Creates the actor of compute node `node` (ranks [first_rank, first_rank + count)), sending to
// `ionode`, starting at `start_s`. Calls `finished` once per rank after its last request.
// `pattern`, `out` (indexed by rank) and `finished` must outlive the simulation.
//
// `aggregate` (intra-node aggregation, as Malakar & Vishwanath's ranks gathering to one sender):
// the node works in steps; step i sends request i of every rank in ONE message (the sum of their
// bytes), and step i + 1 starts when every request of step i is answered. Requests of the step
// that continue each other in one file are one request, as the sender writes the gathered
// buffer (each rank is answered its share); others stay separate requests of the message. The
// gather inside the node costs nothing in this model. `opens` (a metadata server): each rank opens
// its file first and closes it after the node's last reply. `wear_out` (null: none): the node takes
// part in the pattern's wear-out as one participant, with the most requests any of its ranks did by
// the stonewall.
void StartNodeIssuer(const Pattern& pattern, uint32_t node, uint32_t first_rank, uint32_t count,
                     simgrid::s4u::Host* host, simgrid::s4u::Mailbox* ionode, double start_s,
                     bool aggregate, bool opens, WearOut* wear_out, std::vector<RankResult>* out,
                     const std::function<void()>* finished);

}  // namespace iorelay::sim
