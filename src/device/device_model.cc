// DeviceModel: seek + transfer (TransferNs: a straight line or measured access times) + the
// write cost for writes, with a busy-until clock for one call at a time.
#include "device/device_model.h"

#include <algorithm>
#include <cmath>

namespace iorelay::device {

int64_t DeviceModel::CostNs(const Access& a) const {
  const double transfer_ns = TransferNs(profile_, a.length);
  return (Continues(a) ? 0 : profile_.seek_ns) + (a.write ? profile_.write_ns : 0) +
         static_cast<int64_t>(std::llround(transfer_ns));
}

int64_t DeviceModel::Submit(int64_t now_ns, const Access& a) {
  const int64_t start = std::max(now_ns, busy_until_ns_);
  busy_until_ns_ = start + CostNs(a);
  positioned_ = true;
  head_object_ = a.object;
  head_offset_ = a.offset + a.length;
  return busy_until_ns_;
}

}  // namespace iorelay::device
