// An I/O node as the daemon runs one: requests arrive as messages from compute nodes, the real
// Scheduler (made by spec from src/sched's registry) orders and merges them on SimGrid's clock,
// at most `slots` dispatches are in flight, and each dispatch goes through the daemon's dispatch
// core (dispatch::BuildPlan, dispatch::SplitResult) into storage calls; replies go back over the
// network (a read's reply carries its data).
#pragma once

#include <cstdint>
#include <memory>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Mutex.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sched/scheduler.h"
#include "sim/cpu_pool.h"
#include "sim/io_request.h"
#include "sim/link_pipe.h"
#include "sim/storage_model.h"

namespace iorelay::sim {

struct IoNodeCounters {
  uint64_t requests = 0;    // received
  uint64_t dispatches = 0;  // scheduler dispatches
  uint64_t calls = 0;       // storage calls (a dispatch's plan may hold several)
};

class IoNode {
 public:
  // `storage` must outlive the simulation. Nothing runs before Start().
  // Requests arrive and replies leave at the `fronts` hosts (its bridge nodes: one, or Blue
  // Gene/Q's two; a request's reply leaves where it arrived); storage calls leave from
  // `storage_side` (the same host on a star network). With `bridge_links` (by front, the far
  // end of each bridge's link to this node), a write's data cross from there to `storage_side`
  // before the request is queued, and a read's data back before the reply leaves its front.
  IoNode(int index, std::vector<simgrid::s4u::Host*> fronts, simgrid::s4u::Host* storage_side,
         std::unique_ptr<sched::Scheduler> scheduler, int slots, int64_t request_overhead_ns,
         StorageModel* storage, const CpuPool* cpu = nullptr,
         std::vector<simgrid::s4u::Host*> bridge_links = {});
  IoNode(const IoNode&) = delete;
  IoNode& operator=(const IoNode&) = delete;

  // Creates the node's actors.
  void Start();
  // Asks the node to end once its dispatches in flight are done (call from an actor, after the
  // last request was answered). Not daemon actors: SimGrid kills those by unwinding their
  // stacks, which then release an s4u::Mutex from a dying actor (a hang under thread contexts).
  void Stop();
  // Where compute nodes entering at front `entry` send their requests.
  simgrid::s4u::Mailbox* mailbox(int entry = 0) const { return mailboxes_[entry]; }
  const IoNodeCounters& counters() const { return counters_; }
  // Records every dispatch as its requests' (rank, index) in the order dispatches start; null
  // (the default) records nothing. `log` must outlive the simulation.
  using DispatchLog = std::vector<std::vector<std::pair<uint32_t, uint64_t>>>;
  void set_dispatch_log(DispatchLog* log) { dispatch_log_ = log; }

 private:
  struct Done {
    std::vector<uint64_t> ids;
    std::vector<IoRequest*> requests;  // answered by the loop, from the front each came in at
    int64_t duration_ns = 0;
  };
  void ReceiveLoop(int entry);
  // Queues a message's requests for the scheduler (under mutex_).
  void Queue(IoRequest* message);
  // A receiver is done (the last one sets stopping_).
  void EndReceiver();
  void Reply(IoRequest* r);
  void ScheduleLoop();
  void RunDispatch(sched::Dispatch d);
  int64_t NowNs() const;

  int index_;
  std::vector<simgrid::s4u::Host*> fronts_;
  simgrid::s4u::Host* storage_side_;
  // By front, each bridge's link towards the storage side and back; empty: no bridge links.
  std::vector<std::unique_ptr<LinkPipe>> bridge_in_;
  std::vector<std::unique_ptr<LinkPipe>> bridge_out_;
  std::unique_ptr<sched::Scheduler> scheduler_;
  int slots_;
  int64_t request_overhead_ns_;
  StorageModel* storage_;
  const CpuPool* cpu_;                             // null: dispatches cost no processor time
  std::vector<simgrid::s4u::Mailbox*> mailboxes_;  // by front
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr wakeup_;
  // Guarded by mutex_ (actors interleave only at SimGrid calls, but the condition variable
  // needs the lock anyway).
  std::vector<IoRequest*> inbox_;
  std::vector<Done> done_;
  std::unordered_map<uint64_t, IoRequest*> in_scheduler_;  // scheduler id → request
  uint64_t next_id_ = 1;
  int busy_slots_ = 0;
  size_t receivers_running_ = 0;
  bool stopping_ = false;   // every receiver got the stop message
  IoRequest stop_message_;  // sent by Stop() to every front: its address ends a receiver
  IoNodeCounters counters_;
  DispatchLog* dispatch_log_ = nullptr;
};

}  // namespace iorelay::sim
