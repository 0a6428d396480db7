#include "sim/link_pipe.h"

#include <mutex>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <utility>

namespace iorelay::sim {

namespace sg4 = simgrid::s4u;

LinkPipe::LinkPipe(sg4::Host* actor_host, sg4::Host* from, sg4::Host* to)
    : actor_host_(actor_host),
      from_(from),
      to_(to),
      mutex_(sg4::Mutex::create()),
      wakeup_(sg4::ConditionVariable::create()) {}

void LinkPipe::Start() {
  sg4::Actor::create("pipe-" + from_->get_name() + "-" + to_->get_name(), actor_host_,
                     [this] { Loop(); });
}

void LinkPipe::Send(uint64_t bytes, std::function<void()> then) {
  Push({bytes, std::move(then), false});
}

void LinkPipe::Stop(std::function<void()> then) { Push({0, std::move(then), true}); }

void LinkPipe::Push(Item item) {
  std::unique_lock lock(*mutex_);
  queue_.push_back(std::move(item));
  wakeup_->notify_one();
}

void LinkPipe::Loop() {
  for (;;) {
    Item item;
    {
      std::unique_lock lock(*mutex_);
      while (queue_.empty()) wakeup_->wait(lock);
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    if (!item.stop) sg4::Comm::sendto(from_, to_, item.bytes);
    if (item.then) item.then();
    if (item.stop) return;
  }
}

}  // namespace iorelay::sim
