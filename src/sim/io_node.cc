// The I/O node's actors: a receiver per front (its mailbox's permanent receiver, so requests flow
// in concurrently), the scheduling loop (the daemon's Dispatcher on SimGrid's clock), one short
// actor per dispatch in flight, one per reply that leaves from a front other than the first, and
// with bridge links, one per link and direction (LinkPipe).
#include "sim/io_node.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <span>

#include "dispatch/plan.h"

namespace iorelay::sim {

namespace sg4 = simgrid::s4u;

namespace {
constexpr uint32_t kDirectAlignBytes = 4096;
}  // namespace

IoNode::IoNode(int index, std::vector<sg4::Host*> fronts, sg4::Host* storage_side,
               std::unique_ptr<sched::Scheduler> scheduler, int slots, int64_t request_overhead_ns,
               StorageModel* storage, const CpuPool* cpu, std::vector<sg4::Host*> bridge_links)
    : index_(index),
      fronts_(std::move(fronts)),
      storage_side_(storage_side),
      scheduler_(std::move(scheduler)),
      slots_(slots),
      request_overhead_ns_(request_overhead_ns),
      storage_(storage),
      cpu_(cpu),
      mutex_(sg4::Mutex::create()),
      wakeup_(sg4::ConditionVariable::create()) {
  for (size_t e = 0; e < fronts_.size(); ++e) {
    const std::string name = "io" + std::to_string(index) + (e > 0 ? "/" + std::to_string(e) : "");
    mailboxes_.push_back(sg4::Mailbox::by_name(name));
  }
  for (size_t e = 0; e < bridge_links.size(); ++e) {
    bridge_in_.push_back(std::make_unique<LinkPipe>(fronts_[e], bridge_links[e], storage_side_));
    bridge_out_.push_back(std::make_unique<LinkPipe>(fronts_[e], storage_side_, bridge_links[e]));
  }
}

int64_t IoNode::NowNs() const { return std::llround(sg4::Engine::get_clock() * 1e9); }

void IoNode::Start() {
  const std::string name = "io" + std::to_string(index_);
  receivers_running_ = fronts_.size();
  for (size_t e = 0; e < fronts_.size(); ++e) {
    sg4::ActorPtr receiver = sg4::Actor::create(name + "-recv", fronts_[e],
                                                [this, e] { ReceiveLoop(static_cast<int>(e)); });
    mailboxes_[e]->set_receiver(receiver);
  }
  sg4::Actor::create(name + "-sched", fronts_[0], [this] { ScheduleLoop(); });
  for (auto& pipe : bridge_in_) pipe->Start();
  for (auto& pipe : bridge_out_) pipe->Start();
}

void IoNode::Stop() {
  // Sent from each front's own host: the caller's host may have no route to it (TopologyZone
  // makes only the routes of the run's messages).
  for (size_t e = 0; e < fronts_.size(); ++e) {
    sg4::Actor::create("stop", fronts_[e], [this, e] { mailboxes_[e]->put(&stop_message_, 0); });
  }
}

void IoNode::ReceiveLoop(int entry) {
  for (;;) {
    auto* request = mailboxes_[entry]->get<IoRequest>();
    if (request == &stop_message_) {
      // With a bridge link, the receiver's part ends once the writes before the stop crossed it.
      if (bridge_in_.empty()) {
        EndReceiver();
      } else {
        bridge_in_[entry]->Stop([this] { EndReceiver(); });
      }
      return;
    }
    uint64_t written = 0;  // the message's write data
    for (IoRequest* r = request; r != nullptr; r = r->next_in_message) {
      r->entry = static_cast<uint32_t>(entry);
      if (!r->metadata && r->write) written += r->length;
    }
    if (bridge_in_.empty() || written == 0) {
      Queue(request);
      continue;
    }
    // The data cross the bridge's link while this receiver takes the next message.
    bridge_in_[entry]->Send(written, [this, request] { Queue(request); });
  }
}

void IoNode::EndReceiver() {
  std::unique_lock lock(*mutex_);
  stopping_ = --receivers_running_ == 0;
  wakeup_->notify_one();
}

void IoNode::Queue(IoRequest* message) {
  std::unique_lock lock(*mutex_);
  for (IoRequest* r = message; r != nullptr; r = r->next_in_message) {
    if (r->metadata) {
      // Metadata calls bypass the scheduler, as in the daemon (its session handles them).
      sg4::Actor::create("metadata", fronts_[r->entry], [this, r] {
        if (cpu_ != nullptr) cpu_->Dispatch(/*requests=*/1, /*calls=*/1);
        storage_->Metadata(storage_side_, nullptr, r->metadata_op, r->directory, r->file);
        r->reply_to->put_init(r, kMessageHeaderBytes)->detach();
      });
    } else {
      inbox_.push_back(r);
    }
  }
  wakeup_->notify_one();
}

void IoNode::Reply(IoRequest* r) {
  const uint64_t bytes = kMessageHeaderBytes + (r->write ? 0 : r->bytes_done);
  if (!bridge_out_.empty() && !r->write && r->bytes_done > 0) {
    // A read's data cross the bridge's link first, then leave from the bridge node (the pipe's
    // actor runs there).
    bridge_out_[r->entry]->Send(r->bytes_done,
                                [r, bytes] { r->reply_to->put_init(r, bytes)->detach(); });
    return;
  }
  if (r->entry == 0) {
    r->reply_to->put_init(r, bytes)->detach();  // from this actor's host, fronts_[0]
    return;
  }
  // A comm leaves from its sender's host: an actor on the front the request came in at.
  sg4::Actor::create("reply", fronts_[r->entry], [r, bytes] { r->reply_to->put(r, bytes); });
}

void IoNode::ScheduleLoop() {
  std::unique_lock lock(*mutex_);
  sched::Dispatch d;
  for (;;) {
    for (IoRequest* r : inbox_) {
      sched::Request q;
      q.id = next_id_++;
      q.file = sched::FileKey{0, r->file};
      q.op = r->write ? sched::IoOp::kWrite : sched::IoOp::kRead;
      q.offset = r->offset;
      q.length = r->length;
      q.arrival_ns = NowNs();
      q.merge_class = r->merge_class;
      q.app = r->app;
      q.client = (static_cast<uint64_t>(r->app) << 32 | r->rank) + 1;
      q.mergeable = r->positional && !r->append;
      in_scheduler_.emplace(q.id, r);
      scheduler_->Add(q);
      ++counters_.requests;
    }
    inbox_.clear();
    for (const Done& done : done_) {
      // Replies leave from the front hosts (the dispatch ran on the storage side).
      for (IoRequest* r : done.requests) Reply(r);
      for (uint64_t id : done.ids) scheduler_->Release(id, 0, done.duration_ns);
    }
    done_.clear();
    int64_t wake_ns = -1;
    while (busy_slots_ < slots_) {
      const sched::Decision decision = scheduler_->Next(NowNs(), &d);
      if (decision.kind == sched::Decision::Kind::kDispatch) {
        ++busy_slots_;
        ++counters_.dispatches;
        sg4::Actor::create("dispatch", storage_side_, [this, d] { RunDispatch(d); });
        continue;
      }
      if (decision.kind == sched::Decision::Kind::kSleepUntil) {
        // At least 1 ns ahead: a wake-up at or before now would spin at one simulated instant.
        wake_ns = std::max(decision.wake_ns, NowNs() + 1);
      }
      break;
    }
    if (stopping_ && busy_slots_ == 0 && inbox_.empty() && done_.empty() &&
        scheduler_->queued() == 0) {
      for (auto& pipe : bridge_out_) pipe->Stop(nullptr);  // after the replies queued on it
      return;
    }
    if (wake_ns >= 0) {
      // Half a nanosecond late, so that the clock read back in ns has reached wake_ns.
      wakeup_->wait_until(lock, (static_cast<double>(wake_ns) + 0.5) * 1e-9);
    } else {
      wakeup_->wait(lock);
    }
  }
}

void IoNode::RunDispatch(sched::Dispatch d) {
  const int64_t start_ns = NowNs();
  if (request_overhead_ns_ > 0) {
    sg4::this_actor::sleep_for(static_cast<double>(request_overhead_ns_) * 1e-9);
  }
  std::vector<IoRequest*> requests;
  std::vector<dispatch::RequestDesc> descs;
  {
    std::unique_lock lock(*mutex_);
    for (uint64_t id : d.request_ids) {
      auto it = in_scheduler_.find(id);
      requests.push_back(it->second);
      in_scheduler_.erase(it);
    }
  }
  if (dispatch_log_ != nullptr) {
    auto& members = dispatch_log_->emplace_back();
    for (const IoRequest* r : requests) members.emplace_back(r->rank, r->index);
  }
  for (const IoRequest* r : requests) {
    dispatch::RequestDesc desc;
    desc.offset = r->offset;
    desc.length = r->length;
    desc.positional = r->positional;
    desc.append = r->append;
    desc.merge_class = r->merge_class;
    desc.direct_align = (r->merge_class & kMergeClassDirect) != 0 ? kDirectAlignBytes : 0;
    descs.push_back(desc);
  }
  dispatch::Plan plan;
  dispatch::BuildPlan(descs, d.overlapping, &plan);
  if (cpu_ != nullptr) {
    uint64_t calls = 0;
    for (const dispatch::Step& step : plan.steps)
      calls += step.kind != dispatch::Step::Kind::kRefuse;
    cpu_->Dispatch(requests.size(), calls);
  }
  std::vector<uint64_t> lengths;
  std::vector<dispatch::Share> shares;
  for (const dispatch::Step& step : plan.steps) {
    std::span<const size_t> idx = plan.Of(step);
    if (step.kind == dispatch::Step::Kind::kRefuse) {
      requests[idx[0]]->error = step.error;
      continue;
    }
    lengths.clear();
    uint64_t length = 0;
    for (size_t i : idx) {
      lengths.push_back(requests[i]->length);
      length += requests[i]->length;
    }
    ++counters_.calls;
    const IoRequest& first = *requests[idx[0]];
    const uint64_t done =
        storage_->Call(storage_side_, first.file, first.write, first.offset, length);
    dispatch::SplitResult(Result<size_t>(static_cast<size_t>(done)), lengths, &shares);
    for (size_t k = 0; k < idx.size(); ++k) {
      requests[idx[k]]->bytes_done = shares[k].bytes;
      requests[idx[k]]->error = shares[k].error;
    }
  }
  std::unique_lock lock(*mutex_);
  done_.push_back({std::move(d.request_ids), std::move(requests), NowNs() - start_ns});
  --busy_slots_;
  wakeup_->notify_one();
}

}  // namespace iorelay::sim
