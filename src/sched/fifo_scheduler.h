// FIFO (time order): the reference scheduler; arrival order, no merging, one request per
// dispatch, never holds a request back.
#pragma once

#include <deque>

#include "sched/scheduler.h"

namespace iorelay::sched {

class FifoScheduler final : public Scheduler {
 public:
  const char* name() const override { return "fifo"; }
  void Add(const Request& request) override { queue_.push_back(request); }
  Decision Next(int64_t now_ns, Dispatch* out) override;
  void Release(uint64_t, int, int64_t) override {}
  size_t queued() const override { return queue_.size(); }

 private:
  std::deque<Request> queue_;
};

}  // namespace iorelay::sched
