// Backend selection by name (--backend, --delay-us); the list is explicit, no static registry.
#include <chrono>

#include "backend/backend.h"
#include "backend/delay_backend.h"
#include "backend/null_backend.h"
#include "backend/posix_backend.h"

namespace iorelay::backend {

Result<std::unique_ptr<Backend>> MakeBackend(const std::string& name, int64_t delay_us) {
  std::unique_ptr<Backend> b;
  if (name == "posix") {
    b = std::make_unique<PosixBackend>();
  } else if (name == "null") {
    b = std::make_unique<NullBackend>();
  } else {
    return Status::InvalidArgument("unknown backend '" + name + "' (posix, null)");
  }
  if (delay_us < 0) return Status::InvalidArgument("delay must be >= 0 microseconds");
  if (delay_us > 0) {
    b = std::make_unique<DelayBackend>(std::move(b), std::chrono::microseconds(delay_us));
  }
  return b;
}

}  // namespace iorelay::backend
