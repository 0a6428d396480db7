// A forwarding backend that sleeps before every call but close (shutdown paths) and the
// O_DIRECT alignment query: tests use it to keep requests in flight (heartbeats, SIGKILL,
// shutdown) without a slow device.
#pragma once

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "backend/forwarding_backend.h"

namespace iorelay::backend {

class DelayBackend final : public ForwardingBackend {
 public:
  DelayBackend(std::unique_ptr<Backend> inner, std::chrono::microseconds per_call)
      : ForwardingBackend(std::move(inner)), delay_(per_call) {}

 protected:
  void BeforeCall(const char* call) override {
    if (std::strcmp(call, "close") == 0 || std::strcmp(call, "direct_io_alignment") == 0) return;
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
  }

 private:
  std::chrono::microseconds delay_;
};

}  // namespace iorelay::backend
