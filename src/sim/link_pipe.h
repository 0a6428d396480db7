// One direction of a point-to-point link that carries messages one at a time, in the order they
// were handed to it (store and forward), as Blue Gene/Q's bridge-to-I/O-node link does. One
// actor per pipe moves them, so a pipe is one flow at a time in SimGrid's sharing model: a
// thousand messages waiting for a link cost the engine nothing, where a flow each would make
// every completion re-share the link among all of them.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mutex.hpp>

namespace iorelay::sim {

class LinkPipe {
 public:
  // Messages go from host `from` to host `to`; the pipe's actor runs on `actor_host`, where its
  // `then` callbacks run too.
  LinkPipe(simgrid::s4u::Host* actor_host, simgrid::s4u::Host* from, simgrid::s4u::Host* to);
  LinkPipe(const LinkPipe&) = delete;
  LinkPipe& operator=(const LinkPipe&) = delete;

  // Creates the pipe's actor.
  void Start();
  // Queues `bytes` to send; `then` runs on the pipe's actor once they arrived. Call from an actor.
  void Send(uint64_t bytes, std::function<void()> then);
  // The actor ends after everything queued before, then runs `then`. Not a daemon actor, for the
  // reason IoNode::Stop gives.
  void Stop(std::function<void()> then);

 private:
  struct Item {
    uint64_t bytes = 0;
    std::function<void()> then;
    bool stop = false;
  };
  void Push(Item item);
  void Loop();

  simgrid::s4u::Host* actor_host_;
  simgrid::s4u::Host* from_;
  simgrid::s4u::Host* to_;
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr wakeup_;
  std::deque<Item> queue_;  // guarded by mutex_
};

}  // namespace iorelay::sim
