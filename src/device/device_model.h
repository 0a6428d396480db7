// A pure model of one storage device (no OS calls): how long a call takes, from a seek
// when it does not continue the previous access plus size over bandwidth. The daemon's
// emulated-disk Backend and the simulator share it.
#pragma once

#include <cstdint>

#include "device/device_profile.h"

namespace iorelay::device {

// Where an access lands: `object` names the region on the device (the file), so two files
// are never contiguous with each other.
struct Access {
  uint64_t object = 0;
  uint64_t offset = 0;  // bytes
  uint64_t length = 0;  // bytes
  bool write = false;   // pays the profile's write_ns
};

// One call at a time, like a disk head. Not thread-safe: the caller serialises (the
// emulated backend holds a lock around Submit; the simulator is single-threaded).
class DeviceModel {
 public:
  explicit DeviceModel(DeviceProfile profile) : profile_(std::move(profile)) {}
  const DeviceProfile& profile() const { return profile_; }

  // Service time of `a` from the current head position; does not move the head.
  int64_t CostNs(const Access& a) const;
  // Serves `a` submitted at `now_ns`: it starts when the device is free, takes CostNs(a),
  // and leaves the head at its end. Returns the completion time.
  int64_t Submit(int64_t now_ns, const Access& a);
  int64_t busy_until_ns() const { return busy_until_ns_; }
  // True when `a` starts exactly where the previous access ended (no seek).
  bool Continues(const Access& a) const {
    return positioned_ && a.object == head_object_ && a.offset == head_offset_;
  }

 private:
  DeviceProfile profile_;
  bool positioned_ = false;  // the first access always seeks
  uint64_t head_object_ = 0;
  uint64_t head_offset_ = 0;
  int64_t busy_until_ns_ = 0;
};

}  // namespace iorelay::device
