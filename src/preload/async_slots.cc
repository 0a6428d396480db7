// The budget of requests the AIO wrappers keep in flight at the daemon (state.h).
#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "client/env_table.h"
#include "preload/state.h"

namespace iorelay::preload {
namespace {

std::atomic<int> g_in_flight{0};

int Limit() {
  // Half of the client's connection pool (IORELAY_MAX_CONNECTIONS, 64 unless set; the client
  // takes 0 as 1): none with a pool of one, whose only connection a request in flight would
  // hold while the next one waits for it.
  static const int limit = [] {
    const char* v = client::ReadEnv(client::EnvVarId::kMaxConnections);
    const long pool = v != nullptr && *v != '\0' ? strtol(v, nullptr, 10) : 64;
    return static_cast<int>(std::min(std::max(pool, 1L), 4096L) / 2);
  }();
  return limit;
}

}  // namespace

bool TakeAsyncSlot() {
  int n = g_in_flight.load(std::memory_order_relaxed);
  while (n < Limit()) {
    if (g_in_flight.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel)) return true;
  }
  return false;
}

void ReturnAsyncSlot() { g_in_flight.fetch_sub(1, std::memory_order_acq_rel); }

}  // namespace iorelay::preload
