// Planning a dispatch's backend calls and splitting their results (see plan.h).
#include "dispatch/plan.h"

#include <algorithm>
#include <cerrno>

namespace iorelay::dispatch {

bool MisalignedDirect(const RequestDesc& r) {
  if (r.direct_align == 0 || !r.positional) return false;
  return r.offset % r.direct_align != 0 || r.length % r.direct_align != 0 ||
         r.buffer % r.direct_align != 0;
}

bool Continues(const RequestDesc& a, const RequestDesc& b) {
  return a.positional && b.positional && !a.append && !b.append && a.merge_class == b.merge_class &&
         b.offset == a.offset + a.length;
}

void BuildPlan(std::span<const RequestDesc> requests, bool overlapping, Plan* out) {
  out->steps.clear();
  out->requests.clear();
  std::vector<size_t>& run = out->pending;
  run.clear();
  auto flush = [out, &run] {
    if (run.empty()) return;
    out->steps.push_back(
        {Step::Kind::kCall, out->requests.size(), out->requests.size() + run.size(), 0});
    out->requests.insert(out->requests.end(), run.begin(), run.end());
    run.clear();
  };
  for (size_t i = 0; i < requests.size(); ++i) {
    if (MisalignedDirect(requests[i])) {
      // Answered where it stands; the run around it goes on.
      out->steps.push_back(
          {Step::Kind::kRefuse, out->requests.size(), out->requests.size() + 1, EINVAL});
      out->requests.push_back(i);
      continue;
    }
    const bool joins = !overlapping && !run.empty() && run.size() < kMaxIov &&
                       Continues(requests[run.back()], requests[i]);
    if (!joins) flush();
    run.push_back(i);
  }
  flush();
}

void SplitResult(const Result<size_t>& result, std::span<const uint64_t> lengths,
                 std::vector<Share>* out) {
  out->assign(lengths.size(), Share{});
  if (!result.ok()) {
    for (Share& s : *out) s.error = result.status().code();
    return;
  }
  uint64_t left = *result;
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (left == 0 && lengths[i] > 0) {
      (*out)[i].retry_alone = true;
      continue;
    }
    const uint64_t mine = std::min(left, lengths[i]);
    left -= mine;
    (*out)[i].bytes = mine;
  }
}

}  // namespace iorelay::dispatch
