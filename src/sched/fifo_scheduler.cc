// FifoScheduler: pops the oldest request.
#include "sched/fifo_scheduler.h"

#include "sched/algorithms.h"

namespace iorelay::sched {

Decision FifoScheduler::Next(int64_t, Dispatch* out) {
  if (queue_.empty()) return Decision{Decision::Kind::kIdle, 0};
  const Request& r = queue_.front();
  out->file = r.file;
  out->op = r.op;
  out->offset = r.offset;
  out->length = r.length;
  out->request_ids.clear();
  out->request_ids.push_back(r.id);
  out->overlapping = false;
  queue_.pop_front();
  return Decision{Decision::Kind::kDispatch, 0};
}

SchedulerResult MakeFifo(const SchedulerParams& params) {
  ParamReader reader("fifo", params);
  IORELAY_RETURN_IF_ERROR(reader.Finish());
  return std::unique_ptr<Scheduler>(std::make_unique<FifoScheduler>());
}

}  // namespace iorelay::sched
