// Gather: the bounded wait for the clients just answered (see gather.h).
#include "sched/gather.h"

#include <nlohmann/json.hpp>

#include "common/units.h"

namespace iorelay::sched {

void Gather::Add(const Request& request) {
  inner_->Add(request);
  if (request.client == 0) return;
  ++present_[request.client];
  owner_.emplace(request.id, Owner{request.client, -1});
  if (auto it = answered_at_.find(request.client); it != answered_at_.end()) {
    expected_.erase({it->second, request.client});  // it is back
    answered_at_.erase(it);
  }
}

Decision Gather::Next(int64_t now_ns, Dispatch* out) {
  while (!expected_.empty() && expected_.begin()->first + wait_ns_ <= now_ns) {
    answered_at_.erase(expected_.begin()->second);
    expected_.erase(expected_.begin());
  }
  if (!expected_.empty() && inner_->queued() > 0) {
    return Decision{Decision::Kind::kSleepUntil, expected_.begin()->first + wait_ns_};
  }
  Decision d = inner_->Next(now_ns, out);
  if (d.kind == Decision::Kind::kDispatch) {
    for (uint64_t id : out->request_ids) {
      if (auto it = owner_.find(id); it != owner_.end()) it->second.dispatched_ns = now_ns;
    }
  }
  return d;
}

void Gather::Release(uint64_t request_id, int result, int64_t duration_ns) {
  inner_->Release(request_id, result, duration_ns);
  auto it = owner_.find(request_id);
  if (it == owner_.end()) return;
  const Owner owner = it->second;
  owner_.erase(it);
  auto p = present_.find(owner.client);
  if (p == present_.end() || --p->second > 0) return;
  present_.erase(p);
  // Its last request is answered (when its dispatch ended): it is expected back.
  const int64_t answered_ns = owner.dispatched_ns + duration_ns;
  answered_at_[owner.client] = answered_ns;
  expected_.emplace(answered_ns, owner.client);
}

nlohmann::json Gather::EffectiveConfig() const {
  nlohmann::json config = inner_->EffectiveConfig();
  config["gather"] = units::FormatDurationNs(wait_ns_);
  return config;
}

}  // namespace iorelay::sched
