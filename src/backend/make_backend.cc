// Backend selection by name (--backend posix|null|emulated:PROFILE, --delay-us); the list is
// explicit, no static registry.
#include <chrono>

#include "backend/backend.h"
#include "backend/delay_backend.h"
#include "backend/emulated_backend.h"
#include "backend/null_backend.h"
#include "backend/posix_backend.h"

namespace iorelay::backend {

Result<std::unique_ptr<Backend>> MakeBackend(const std::string& name, int64_t delay_us) {
  std::unique_ptr<Backend> b;
  if (name == "posix") {
    b = std::make_unique<PosixBackend>();
  } else if (name == "null") {
    b = std::make_unique<NullBackend>();
  } else if (name.rfind("emulated:", 0) == 0) {
    Result<device::DeviceProfile> profile = device::ParseDeviceProfile(name.substr(9));
    if (!profile.ok()) {
      return Status::InvalidArgument("--backend " + name + ": " + profile.status().message());
    }
    b = std::make_unique<EmulatedBackend>(std::make_unique<PosixBackend>(), *profile);
  } else {
    return Status::InvalidArgument("unknown backend '" + name +
                                   "' (posix, null, emulated:PROFILE such as emulated:hdd)");
  }
  if (delay_us < 0) return Status::InvalidArgument("delay must be >= 0 microseconds");
  if (delay_us > 0) {
    b = std::make_unique<DelayBackend>(std::move(b), std::chrono::microseconds(delay_us));
  }
  return b;
}

}  // namespace iorelay::backend
